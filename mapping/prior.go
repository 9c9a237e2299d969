package mapping

import (
	"encoding/json"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// priorText is a message the run showed before this translator took over:
// its whole text so far, and whether it is still open.
type priorText struct {
	text string
	open bool
}

// resumeFrom rebuilds the translator's state from the events a run already
// wrote to its journal (Options.Prior), so that a translator taking over a
// run — after a bridge restart, or from an instance that died — continues
// it where the journal ends: what is open stays open until it closes,
// text already shown is not shown again when a Task snapshot repeats it,
// and the shared state and its version carry on.
//
// Message ids are deterministic (name-based on thread, run and source), so
// a stream this translator opens for an artifact or the status messages
// finds the text the journal shows under the same id (see stream). A
// replaced artifact's later generations are numbered by the order streams
// were opened in, which a new translator cannot know; such a message may
// be shown again.
func (t *Translator) resumeFrom(events []agui.Event) {
	t.started = true // RUN_STARTED and the opening snapshot are in the journal
	t.prior = map[string]*priorText{}
	var state []byte
	pendingCalls := map[string]*ToolCallRef{}
	parents := map[string]string{}
	texted := map[string]bool{}  // messages with text
	aside := false               // status text was shown as progress
	var progress strings.Builder // and that text, for an answer made of it at completion
	opening := 0
	for _, e := range events {
		switch e := e.(type) {
		case *agui.RunStarted:
			opening++
			continue
		case *agui.StateSnapshot, *agui.StateDelta:
			state, t.stateVersion = replayState(state, e)
		case *agui.TextMessageStart:
			p := t.prior[e.MessageID]
			if p == nil {
				p = &priorText{}
				t.prior[e.MessageID] = p
			}
			p.open = true
		case *agui.TextMessageContent:
			if p := t.prior[e.MessageID]; p != nil {
				p.text += e.Delta
			}
			t.recordText(e.MessageID, e.Delta)
			texted[e.MessageID] = true
		case *agui.TextMessageEnd:
			if p := t.prior[e.MessageID]; p != nil {
				p.open = false
			}
		case *agui.StepStarted:
			t.step = e.StepName
		case *agui.StepFinished:
			t.step = ""
		case *agui.ReasoningStart:
			t.reasoning = true
			t.reasoningN++
			t.openReasoning = e.MessageID
		case *agui.ReasoningEnd:
			t.reasoning = false
		case *agui.ToolCallStart:
			ref := &ToolCallRef{ToolCallID: e.ToolCallID, Name: e.ToolCallName, CallID: callIDOf(e.Base),
				Frontend: e.Metadata[ToolExecutionKey] != "server"}
			pendingCalls[e.ToolCallID] = ref
			parents[e.ToolCallID] = e.ParentMessageID
		case *agui.ToolCallArgs:
			if ref := pendingCalls[e.ToolCallID]; ref != nil {
				ref.Args = append(ref.Args, e.Delta...)
			}
		case *agui.ToolCallEnd:
			ref := pendingCalls[e.ToolCallID]
			if ref == nil {
				continue
			}
			delete(pendingCalls, e.ToolCallID)
			if ref.Frontend {
				t.frontendCalls = append(t.frontendCalls, *ref)
			} else if ref.CallID != "" {
				t.toolCalls[ref.CallID] = *ref
			}
			t.recordToolCall(parents[e.ToolCallID], *ref)
		case *agui.ToolCallResult:
			for id, ref := range t.toolCalls {
				if ref.ToolCallID == e.ToolCallID {
					ref.Reported = true
					t.toolCalls[id] = ref
				}
			}
			t.runMessages = append(t.runMessages, &runMessage{msg: agui.Message{ID: e.MessageID, Role: agui.RoleTool,
				ToolCallID: e.ToolCallID, Content: agui.TextContent(e.Content)}})
		case *agui.ActivitySnapshot:
			switch e.ActivityType {
			case "a2a.file":
				t.fileN++
			case "a2a.status":
				t.activityID = e.MessageID
				aside = true
				if text, ok := e.Content["text"].(string); ok {
					progress.Reset() // the activity holds all of it
					progress.WriteString(text)
				}
			case A2UIActivityType:
				t.restoreA2UI(e)
			}
		case *agui.ActivityDelta:
			if e.ActivityType == A2UIActivityType {
				t.restoreA2UI(e)
			}
		case *agui.Custom:
			switch e.Name {
			case "a2a.file":
				t.fileN++
			case "a2a.status":
				aside = true
				var v struct{ Text string }
				if json.Unmarshal(e.Value, &v) == nil {
					progress.WriteString(v.Text) // a CUSTOM event holds one update
				}
			case A2UICustomName:
				t.restoreA2UI(e)
			}
		default:
			continue
		}
	}
	// Past RUN_STARTED and the opening snapshot, the agent had answered:
	// it took the run's message.
	t.taken = len(events) > opening+1
	t.unreported = slicesDeleteReported(t.unreported, t.toolCalls)
	for id, p := range t.prior {
		if p.open {
			// Closed at the end unless a stream of this run claims it.
			s := &textStream{key: "prior:" + id, messageID: id, open: true}
			s.shown.WriteString(p.text)
			t.open = s
		}
	}
	t.restoreView(state)
	// What StatusAuto had decided: status text shown as the answer (the
	// status stream's message has text) or as progress.
	if statusID := t.id("message", "status:"+string(t.taskID)); texted[statusID] {
		delete(texted, statusID)
		t.statusRole = autoAnswer
	} else if aside {
		t.statusRole = autoAside
		if progress.Len() > 0 && t.taskID != "" {
			// The progress shown so far: should nothing else answer, the
			// answer at completion is made of it (answerFromStatus).
			t.status = t.newStream("status:" + string(t.taskID))
			t.status.text.WriteString(progress.String())
		}
	}
	t.answered = len(texted) > 0
}

// restoreView takes the bridge's part of the state the journal built as
// the view the client holds, and the task it names as the run's task.
func (t *Translator) restoreView(state []byte) {
	var doc any
	if json.Unmarshal(state, &doc) != nil {
		return
	}
	// A nested run's view sits at its ViewPath (a team member's, under
	// the team's key), a run's own at its key.
	path := t.opt.ViewPath
	if path == "" {
		path = "/" + escapePointer(t.stateKey())
	}
	for _, token := range strings.Split(path, "/")[1:] {
		m, _ := doc.(map[string]any)
		doc = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(token)]
	}
	view, _ := doc.(map[string]any)
	if view == nil {
		return
	}
	t.view.doc = view
	t.view.size = sizeOf(view)
	t.viewShown()
	t.contextID = str(view["contextId"])
	if task, ok := view["task"].(map[string]any); ok {
		t.taskID = a2a.TaskID(str(task["id"]))
		if st := str(task["state"]); st != "" {
			t.state = a2a.TaskState("TASK_STATE_" + strings.ToUpper(st))
		}
	}
}

// stream is the stream source currently writes to; when there is none yet
// but the journal shows a message of this run for source, it continues
// that message with the journal's text as shown. It returns nil when
// source has neither.
func (t *Translator) stream(source string) *textStream {
	if s := t.current[source]; s != nil {
		return s
	}
	if len(t.prior) == 0 {
		return nil
	}
	id := t.id("message", source)
	p := t.prior[id]
	if p == nil {
		return nil
	}
	delete(t.prior, id)
	s := t.newStream(source)
	s.messageID = id
	s.shown.WriteString(p.text)
	s.text.WriteString(p.text)
	if t.open != nil && t.open.messageID == id {
		s.open = true
		t.open = s
	}
	return s
}

// heldStream is a new stream for source that withholds its start while it
// could still repeat text already shown — or, for a source this run has not
// written to yet, the message the journal shows for it.
func (t *Translator) heldStream(source string) *textStream {
	if t.current[source] == nil {
		if s := t.stream(source); s != nil {
			return s
		}
	}
	s := t.newStream(source)
	s.holding = true
	return s
}

// replayState applies a journaled STATE_SNAPSHOT or STATE_DELTA to the
// state document, and returns the version the event set.
func replayState(state []byte, e agui.Event) ([]byte, int64) {
	switch e := e.(type) {
	case *agui.StateSnapshot:
		return append([]byte(nil), e.Snapshot...), stateVersionOf(e.Base)
	case *agui.StateDelta:
		return applyDelta(state, e.Delta), stateVersionOf(e.Base)
	}
	return state, 0
}

func stateVersionOf(b agui.Base) int64 {
	m, _ := b.Metadata[MetadataKey].(map[string]any)
	switch v := m["stateVersion"].(type) {
	case float64:
		return int64(v)
	case int64:
		return v
	case json.Number:
		n, _ := v.Int64()
		return n
	}
	return 0
}

func callIDOf(b agui.Base) string {
	m, _ := b.Metadata[MetadataKey].(map[string]any)
	return str(m["callId"])
}

// applyDelta applies a STATE_DELTA to the state document; a patch that does
// not apply leaves it as it was, as the client would.
func applyDelta(state []byte, delta []agui.PatchOp) []byte {
	raw, err := json.Marshal(delta)
	if err != nil {
		return state
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return state
	}
	if len(state) == 0 {
		state = []byte(`{}`)
	}
	next, err := patch.Apply(state)
	if err != nil {
		return state
	}
	return next
}

// slicesDeleteReported drops the sent results whose calls were reported.
func slicesDeleteReported(results []SentToolResult, calls map[string]ToolCallRef) []SentToolResult {
	out := results[:0]
	for _, r := range results {
		if !calls[r.Call.CallID].Reported {
			out = append(out, r)
		}
	}
	return out
}
