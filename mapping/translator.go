package mapping

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// StatusTextPolicy says where the text of status-update messages goes.
type StatusTextPolicy string

// Status text policies. Whatever the policy, a completed run whose answer
// only ever arrived as status text still shows that answer once.
const (
	// StatusAuto (the default) tells an answer from progress by what
	// follows it. The first status text of a task is held until the next
	// event decides: more status text continuing it while no artifact has
	// answered means the agent answers in status messages (ADK streaming,
	// Strands), and it is shown as assistant text from then on, streaming;
	// more status text starting a line of its own after a finished one
	// ("Looking into it…", "Checking sources…") means progress notes,
	// shown aside, and they become the answer at completion if nothing
	// else answered; answer
	// text in an artifact means status text is progress (Mastra opens
	// every task with "Generating response..."), and it goes to the side
	// as under StatusAsActivity. A task that completes with only the held
	// text answered shows it as the answer; a task that fails, is
	// cancelled or waits for input shows it as progress.
	StatusAuto StatusTextPolicy = "auto"
	// StatusAsMessage shows status text as assistant text, always.
	StatusAsMessage StatusTextPolicy = "message"
	// StatusAsActivity shows progress as an activity (1.0 clients) or a
	// CUSTOM "a2a.status" event (older clients, which reject activities).
	StatusAsActivity StatusTextPolicy = "activity"
	// StatusAsReasoning shows progress as reasoning (1.0 clients) or a
	// CUSTOM "a2a.status" event.
	StatusAsReasoning StatusTextPolicy = "reasoning"
	// StatusHidden drops progress text.
	StatusHidden StatusTextPolicy = "none"
)

// RUN_ERROR codes the translator produces. They are part of the public
// contract: frontends switch on them.
const (
	CodeFailed    = agui.CodeAgentFailed
	CodeRejected  = agui.CodeAgentRejected
	CodeCancelled = agui.CodeCancelled
)

// Interrupt reasons.
const (
	ReasonInputRequired = "input_required"
	ReasonAuthRequired  = "a2a:auth_required"
)

// SchemaMediaType marks a data part of an INPUT_REQUIRED status message as
// the JSON Schema the answer must satisfy (the bridge's convention): as the
// part's mediaType, or — since v0.3 data parts have no media type — as the
// part's metadata "mediaType".
const SchemaMediaType = "application/schema+json"

func isSchemaPart(p *a2a.Part) bool {
	if p.MediaType == SchemaMediaType {
		return true
	}
	mt, _ := p.Metadata["mediaType"].(string)
	return mt == SchemaMediaType
}

// Options configure one run's translation.
type Options struct {
	ThreadID string
	RunID    string
	// Turn tells this run's ids from those of an earlier run of the thread
	// that had the same RunID (CopilotKit resumes an interrupt with the
	// interrupted run's runId): "" when the RunID is new to the thread.
	Turn string
	// Agent is the configured agent name, recorded in interrupt metadata.
	Agent string
	// V1 is true when the client declared protocolVersion "1.0"; only then
	// are 1.0-only events and outcomes produced (AGUI-PROTOCOL.md §10.1 rule 7).
	V1 bool
	// StatusText is the policy for status message text; empty means
	// StatusAuto.
	StatusText StatusTextPolicy
	// Now returns Unix milliseconds for event timestamps and interrupt
	// expiry; nil omits timestamps (and expiry).
	Now func() int64
	// Input is the run's request: its messages and state are the base of
	// the snapshots sent before an interrupt.
	Input *agui.RunAgentInput
	// StateKey is the shared-state key the bridge owns; default "a2a".
	StateKey string
	// InterruptTTL, when positive, makes interrupts expire.
	InterruptTTL time.Duration
	// KnownToolCalls are the thread's earlier server tool calls, so a
	// resumed run reports their results on the original tool call ids.
	KnownToolCalls []ToolCallRef
	// PreviousView is the bridge's part of the shared state as the thread's
	// last run left it, and StateVersion that state's version.
	PreviousView json.RawMessage
	StateVersion int64
	// MaxInlineBytes bounds raw file bytes forwarded to the client (as a
	// data: URL); larger files are announced without their bytes. Default
	// 1 MiB.
	MaxInlineBytes int
	// ResumedTask is the task a resume run answers. Servers that open every
	// turn with a Task snapshot (@a2a-js/sdk) first repeat the interrupted
	// state and earlier artifacts; that snapshot is history, not news.
	ResumedTask a2a.TaskID
	// EarlierArtifacts are the artifacts of the run's task that earlier
	// runs showed: a Task snapshot (GetTask, SubscribeToTask) that repeats
	// them shows nothing new.
	EarlierArtifacts []a2a.ArtifactID
	// SentResults are the answers the run's message carries for the
	// agent's tool calls. Once the agent takes the message (its task moves
	// on), each becomes TOOL_CALL_RESULT on the call's id before anything
	// else the agent shows — unless the agent reports that call's result
	// itself first, which is then shown instead.
	SentResults []SentToolResult
	// ClientResults maps tool calls (AG-UI ids) whose result the client
	// already holds as a tool message of its own — CopilotKit adds one to
	// every tool_call resume — to that message's id. The call's result
	// then replaces that message's content, shown as a MESSAGES_SNAPSHOT
	// (which clients apply by id, in place), instead of a TOOL_CALL_RESULT
	// (which every client adds as a second tool message).
	ClientResults map[string]string
	// Prior are the events the run already wrote to its journal, when this
	// translator takes the run over (a bridge restart, an instance that
	// died): it continues the run where they end, without RUN_STARTED and
	// without showing again what they show (see resumeFrom).
	Prior []agui.Event
	// Reconcile starts the run with a MESSAGES_SNAPSHOT of Input's
	// messages: the client lacks some of the thread's conversation (its
	// stream dropped while a run went on).
	Reconcile bool
	// RedactKeys are object keys (matched case-insensitively) whose values
	// are replaced by "[REDACTED]" wherever agent data enters the shared
	// state, at any depth.
	RedactKeys []string
	// MaxStateBytes, when positive, stops merging an event's data into the
	// state once the state is above it (the caller ends the run with
	// state_too_large on seeing StateSize above its limit).
	MaxStateBytes int
	// A2UIActivities shows A2UI surfaces as activities to a client before
	// 1.0 that renders them (ClientRendersA2UI); 1.0 clients always get
	// activities, the others CUSTOM a2ui events.
	A2UIActivities bool
	// ViewPath, when set, nests this run in an enclosing run that owns
	// the run-level events: the translator writes no RUN_STARTED, its view
	// sits at this JSON pointer of the enclosing run's state (e.g.
	// "/a2a/members/travel") and goes there whole as a STATE_DELTA where a
	// run of its own would write a STATE_SNAPSHOT, and an interrupt leaves
	// the state and messages snapshots to the enclosing run. Its terminal
	// event is still written, unstamped, for the enclosing run to read.
	ViewPath string
	// IDScope are extra name parts of every id the run makes, for runs
	// that share a thread, run and turn and may see the same A2A ids.
	IDScope []string
	// InterruptPrefix prefixes the id of every interrupt the run raises,
	// so that an answer can be routed by its id.
	InterruptPrefix string
}

// Translator turns the A2A events of one run into AG-UI events. It is not
// safe for concurrent use. It never panics on strange input: whatever it is
// fed, its output is a well-formed AG-UI stream that ends exactly once.
type Translator struct {
	opt Options

	taskID    a2a.TaskID
	contextID string
	state     a2a.TaskState

	started bool
	done    bool

	// open is the text stream whose TEXT_MESSAGE_START has been written and
	// whose END has not. At most one is open at a time because ≤0.0.36
	// clients allow nothing but CONTENT/END inside an open message.
	open *textStream
	// current maps a source (an artifact, the status messages, a Message
	// reply) to the stream it currently writes to; streamOrder holds every
	// stream of the run, replaced ones included, for repeat detection.
	current     map[string]*textStream
	streamOrder []*textStream
	// lastArtifact and lastArtifactSource cache artifactSource.
	lastArtifact       a2a.ArtifactID
	lastArtifactSource string
	// status accumulates status-message text, shown or not.
	status *textStream
	// nonText counts the non-text parts already mapped per artifact, so a
	// Task snapshot repeating an artifact does not emit them again.
	nonText map[a2a.ArtifactID]int

	step string // open STEP_STARTED name, "" when none
	// snapshot is set while the status of a Task is mapped.
	snapshot bool

	activityID string // status activity message id (activity policy)
	reasoning  bool   // a reasoning span/message is open (reasoning policy)
	// statusRole is what StatusAuto decided the task's status text is.
	statusRole autoDecision

	// answered is true once answer text from an artifact or a Message
	// reply has been shown.
	answered bool

	view          view
	stateVersion  int64
	reasoningN    int    // reasoning spans opened, for fresh ids
	openReasoning string // id of the open reasoning span and message
	fileN         int    // files shown, for activity ids

	frontendCalls []ToolCallRef
	toolCalls     map[string]ToolCallRef // by A2A call id
	runMessages   []*runMessage
	lastMessage   string // id of the last assistant message written
	pending       []PendingInterrupt

	// unreported are the SentResults not yet reported; taken is set once
	// the agent has taken the run's message (any event past the opening
	// snapshot of a resumed task).
	unreported []SentToolResult
	taken      bool

	// lastStatus is the latest status message mapped (id and text): a Task
	// snapshot (GetTask, SubscribeToTask) repeats it.
	lastStatus struct{ id, text string }
	// prior is the text of the messages Options.Prior shows, by message
	// id, until a stream of this run takes them over.
	prior map[string]*priorText
	// earlier are Options.EarlierArtifacts.
	earlier map[a2a.ArtifactID]bool
	// a2ui holds the run's A2UI surfaces (a2ui.go).
	a2ui a2uiState
}

// textStream is one AG-UI assistant message fed by one A2A source: an
// artifact (per replacement generation), the task's status messages, or a
// Message reply.
type textStream struct {
	key       string
	messageID string
	text      foldText // status text received so far, shown or not
	shown     foldText // text written to the client so far
	held      string   // text withheld as a possible repeat
	holding   bool     // still deciding whether this is a repeat
	open      bool
	ended     bool // lastChunk seen; later appends open a new stream
	dropped   bool // identified as a repeat and discarded
}

// New returns a Translator for one run.
func New(opt Options) *Translator {
	if opt.StatusText == "" {
		opt.StatusText = StatusAuto
	}
	t := &Translator{
		opt:       opt,
		current:   make(map[string]*textStream),
		nonText:   make(map[a2a.ArtifactID]int),
		toolCalls: make(map[string]ToolCallRef),
	}
	for _, r := range opt.KnownToolCalls {
		t.toolCalls[r.CallID] = r
	}
	for _, r := range opt.SentResults {
		if _, known := t.toolCalls[r.Call.CallID]; !known {
			t.toolCalls[r.Call.CallID] = r.Call
		}
		t.unreported = append(t.unreported, r)
	}
	if t.opt.MaxInlineBytes <= 0 {
		t.opt.MaxInlineBytes = MaxInlineFileBytes
	}
	t.earlier = make(map[a2a.ArtifactID]bool, len(opt.EarlierArtifacts))
	for _, id := range opt.EarlierArtifacts {
		t.earlier[id] = true
	}
	t.stateVersion = opt.StateVersion
	t.initView()
	if len(opt.Prior) > 0 {
		t.resumeFrom(opt.Prior)
	}
	return t
}

// TaskID is the A2A task this run follows, once known.
func (t *Translator) TaskID() a2a.TaskID { return t.taskID }

// ContextID is the A2A context learned from the agent, once known.
func (t *Translator) ContextID() string { return t.contextID }

// TaskState is the last task state seen.
func (t *Translator) TaskState() a2a.TaskState { return t.state }

// Done reports whether the terminal event has been produced.
func (t *Translator) Done() bool { return t.done }

// Start produces RUN_STARTED. It is idempotent.
func (t *Translator) Start() []agui.Event {
	if t.started {
		return nil
	}
	t.started = true
	if t.opt.ViewPath != "" {
		// The view joins the enclosing run's state whole; what changes
		// after goes as deltas under it.
		return t.emitWholeView(nil)
	}
	return openRun(t, t.opt.ThreadID, t.opt.RunID, t.opt.V1, t.opt.Reconcile)
}

// Translate maps one A2A event. After the run has ended it returns nothing.
func (t *Translator) Translate(ev a2a.Event) []agui.Event {
	if t.done {
		return nil
	}
	out := t.Start()
	if msg := t.foreign(ev); msg != "" {
		return append(out, t.Fail(agui.CodeTaskMismatch, msg)...)
	}
	out = t.decideByNext(out, ev)
	switch e := ev.(type) {
	case *a2a.Task:
		if e == nil {
			return out
		}
		if t.isResumeSnapshot(e) {
			t.rememberShown(e)
			return t.syncState(out)
		}
		t.taken = true
		out = t.onTask(out, e)
	case *a2a.StatusUpdate:
		if e == nil {
			return out
		}
		t.learn(e.TaskID, e.ContextID)
		t.taken = true
		out = t.onStatus(out, e.Status.State, e.Status.Message, false)
	case *a2a.ArtifactUpdate:
		if e == nil || e.Artifact == nil {
			return out
		}
		t.learn(e.TaskID, e.ContextID)
		t.taken = true
		out = t.onArtifact(out, e.Artifact, e.Append, e.LastChunk)
	case *a2a.Message:
		if e == nil {
			return out
		}
		t.taken = true
		out = t.onMessage(out, e)
	default:
		out = t.closeText(out)
		out = t.custom(out, "a2a.unknown", map[string]any{"event": ev})
	}
	return t.syncState(out)
}

// Fail ends the run with RUN_ERROR after closing everything that is open.
// Text withheld as a possible repeat is written first so nothing is lost.
func (t *Translator) Fail(code, message string) []agui.Event {
	if t.done {
		return nil
	}
	return t.fail(t.Start(), code, message)
}

func (t *Translator) fail(out []agui.Event, code, message string) []agui.Event {
	out = t.settleStatus(out, false)
	out = t.flushHeld(out)
	out = t.closeAll(out)
	return t.finish(out, &agui.RunError{Message: message, Code: code})
}

// Complete ends the run successfully, as when a Message reply ends it.
func (t *Translator) Complete() []agui.Event {
	if t.done {
		return nil
	}
	return t.complete(t.Start())
}

func (t *Translator) complete(out []agui.Event) []agui.Event {
	out = t.flushHeld(out)
	out = t.settleStatus(out, !t.answered)
	out = t.answerFromStatus(out)
	out = t.closeAll(out)
	return t.finish(out, &agui.RunFinished{ThreadID: t.opt.ThreadID, RunID: t.opt.RunID})
}

// foreign describes an event that names another task or context than the
// run's, once the run knows its own; "" for any other. An agent may not
// switch a thread's task mid-stream: the run would adopt the task it
// named, and a later cancel would go there (issue 33 item 10). Such an
// event ends the run with RUN_ERROR a2a_task_mismatch.
func (t *Translator) foreign(ev a2a.Event) string {
	var task a2a.TaskID
	var ctx string
	switch e := ev.(type) {
	case *a2a.Task:
		if e != nil {
			task, ctx = e.ID, e.ContextID
		}
	case *a2a.StatusUpdate:
		if e != nil {
			task, ctx = e.TaskID, e.ContextID
		}
	case *a2a.ArtifactUpdate:
		if e != nil {
			task, ctx = e.TaskID, e.ContextID
		}
	case *a2a.Message:
		if e != nil {
			task, ctx = e.TaskID, e.ContextID
		}
	}
	switch {
	case t.taskID != "" && task != "" && task != t.taskID:
		return fmt.Sprintf("the agent sent an event of task %q in the run of its task %q; a run follows one task", task, t.taskID)
	case t.contextID != "" && ctx != "" && ctx != t.contextID:
		return fmt.Sprintf("the agent sent an event of context %q in the run of its context %q; a run stays in one context", ctx, t.contextID)
	}
	return ""
}

func (t *Translator) learn(taskID a2a.TaskID, contextID string) {
	if taskID != "" {
		t.taskID = taskID
	}
	if contextID != "" {
		t.contextID = contextID
	}
}

// isResumeSnapshot reports the opening snapshot of a resumed task, which
// servers that open every turn with a Task (@a2a-js/sdk) send before
// anything new: it repeats the interrupted state, and is history.
func (t *Translator) isResumeSnapshot(task *a2a.Task) bool {
	return task.ID == t.opt.ResumedTask && t.state == "" && len(t.streamOrder) == 0 && a2a.IsInterrupted(task.Status.State)
}

// rememberShown records a resumed task's artifacts as shown (they were, in
// earlier runs), so that later snapshots do not repeat them.
func (t *Translator) rememberShown(task *a2a.Task) {
	t.learn(task.ID, task.ContextID)
	for _, art := range task.Artifacts {
		if art != nil {
			t.remember(art)
		}
	}
}

// remember records an artifact as shown in full by an earlier run.
func (t *Translator) remember(art *a2a.Artifact) {
	s := t.newStream(t.artifactSource(art.ID))
	s.shown.WriteString(partsText(art.Parts))
	s.ended = true
	t.nonText[art.ID] = len(nonTextOnly(art.Parts))
	t.earlier[art.ID] = true
}

// ShownArtifacts are the artifacts of the run's task shown by this run or
// earlier ones (Options.EarlierArtifacts for the next run on the task).
func (t *Translator) ShownArtifacts() []a2a.ArtifactID {
	seen := map[a2a.ArtifactID]bool{}
	var out []a2a.ArtifactID
	add := func(id a2a.ArtifactID) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, id := range t.opt.EarlierArtifacts {
		add(id)
	}
	for _, s := range t.streamOrder {
		if id, ok := strings.CutPrefix(s.key, "artifact:"); ok {
			id, _, _ = strings.Cut(id, "#")
			add(a2a.ArtifactID(id))
		}
	}
	return out
}

func (t *Translator) onTask(out []agui.Event, task *a2a.Task) []agui.Event {
	t.learn(task.ID, task.ContextID)
	// A Task (the first event of a stream, a blocking result, or a GetTask
	// snapshot) may carry artifacts that were or were not streamed; map
	// each as a complete artifact and let the stream bookkeeping skip what
	// was already shown.
	for _, art := range task.Artifacts {
		if art != nil {
			out = t.onSnapshotArtifact(out, art)
		}
	}
	out = t.executionToolCalls(out, task)
	return t.onStatus(out, task.Status.State, task.Status.Message, true)
}

// onStatus maps a task state and its message. snapshot says they come from
// a Task, which repeats the latest status message: the very message mapped
// last only moves the state.
func (t *Translator) onStatus(out []agui.Event, state a2a.TaskState, msg *a2a.Message, snapshot bool) []agui.Event {
	if msg != nil && msg.Role == a2a.RoleUser {
		// An echo of the user's own message is not agent output.
		msg = nil
	}
	if msg != nil {
		text := messageText(msg)
		if snapshot && msg.ID == t.lastStatus.id && text == t.lastStatus.text && !a2a.IsInterrupted(state) && !a2a.IsTerminal(state) {
			msg = nil
		} else {
			t.lastStatus.id, t.lastStatus.text = msg.ID, text
		}
	}
	t.snapshot = snapshot
	prev := t.state
	if state != "" {
		t.state = state
	}
	// The state's statusText explains the task's state (a question, an
	// error, a closing remark); progress text of a working task is part of
	// the conversation, and would otherwise cost a delta per token.
	var statusText *string
	if txt := strings.TrimSpace(messageText(msg)); txt != "" && state != a2a.TaskStateWorking && state != a2a.TaskStateSubmitted {
		statusText = &txt
	}
	t.noteTask(statusText)
	out = t.thoughts(out, msg)
	switch {
	case state == a2a.TaskStateCompleted:
		t.state = state
		out = t.statusText(out, msg, statusCompletion)
		out = t.nonTextParts(out, msg)
		return t.complete(out)
	case state == a2a.TaskStateFailed || state == a2a.TaskStateRejected:
		t.state = state
		code, fallback := CodeFailed, "The agent failed the task."
		if state == a2a.TaskStateRejected {
			code, fallback = CodeRejected, "The agent rejected the task."
		}
		text := strings.TrimSpace(messageText(msg))
		if text == "" {
			text = fallback
		}
		out = t.nonTextParts(out, msg)
		return t.fail(out, code, text)
	case state == a2a.TaskStateCanceled:
		t.state = state
		out = t.settleStatus(out, false)
		out = t.flushHeld(out)
		out = t.closeAll(out)
		if t.opt.V1 {
			return t.finish(out, &agui.RunFinished{ThreadID: t.opt.ThreadID, RunID: t.opt.RunID,
				Outcome: &agui.Outcome{Type: agui.OutcomeCancelled}})
		}
		return t.finish(out, &agui.RunError{Message: "The task was cancelled.", Code: CodeCancelled})
	case state == a2a.TaskStateInputRequired || state == a2a.TaskStateAuthRequired:
		t.state = state
		return t.interrupt(out, state, msg)
	}
	if state != "" && state != prev {
		out = t.closeText(out)
		out = t.endStep(out)
		t.step = "a2a:" + stepName(state)
		out = t.emit(out, &agui.StepStarted{StepName: t.step})
	}
	out = t.statusText(out, msg, statusProgress)
	return t.nonTextParts(out, msg)
}

// statusRole says what a status message is to the run.
type statusRole int

const (
	statusProgress   statusRole = iota // WORKING/SUBMITTED: progress or a streamed answer
	statusCompletion                   // the message of the COMPLETED status
	statusQuestion                     // the message of INPUT_REQUIRED/AUTH_REQUIRED
)

// statusText routes the text of a status message by the agent's policy.
// Under the message policy it is assistant text; under the others progress
// goes to the side (activity, reasoning, CUSTOM or nowhere), a question is
// still shown, and the accumulated text becomes the answer at completion if
// nothing else answered. StatusAuto decides between the two per task (see
// its comment). Text repeating an answer already shown is dropped.
func (t *Translator) statusText(out []agui.Event, msg *a2a.Message, role statusRole) []agui.Event {
	text := messageText(msg)
	if strings.TrimSpace(text) == "" {
		return out
	}
	if t.status == nil {
		t.status = t.stream("status:" + string(t.taskID))
	}
	if t.status == nil {
		t.status = t.newStream("status:" + string(t.taskID))
	}
	s := t.status
	if t.repeatsOther(s, text) {
		return out
	}
	if t.snapshot && role == statusProgress && strings.HasSuffix(normalize(s.text.String()), normalize(text)) {
		// A snapshot repeating the last progress text (its id unknown to a
		// translator that took the run over).
		return out
	}
	delta := s.deltaFor(text)
	if delta == "" {
		return out
	}
	policy := t.statusPolicy()
	if so := s.text.String(); policy != StatusAsMessage && len(text) > len(so) && strings.HasSuffix(text, so) {
		// Text kept off screen can still be corrected: a message that
		// restates all of it with more in front (a cumulative message after
		// a translator took the run over mid-way) replaces it.
		s.text.Reset()
		delta = text
	}
	if policy == StatusAuto {
		switch {
		case role == statusProgress && !t.answered && s.text.Len() == 0 && onlyText(msg):
			// The task's first status text, alone in its message (a
			// placeholder's shape): held until the next event decides
			// what it is (decideByNext).
			s.text.WriteString(delta)
			return out
		case s.text.Len() > 0 && (t.answered || role == statusQuestion), role == statusProgress && t.answered:
			// An artifact answered, or the task asks after what was held:
			// that was progress, and so is later progress.
			out = t.decideStatus(out, autoAside)
		case role == statusProgress && strings.HasPrefix(delta, "\n"):
			// A second status text that starts a line of its own after a
			// finished one ("Looking into it…", "Checking sources…"):
			// progress reports, not an answer streamed in pieces, which
			// go on mid-sentence ("Hel", "lo, ") or restate what came
			// before (cumulative text). Shown as progress from here; a
			// task that completes with nothing else answering gets them
			// as its answer then (answerFromStatus).
			out = t.decideStatus(out, autoAside)
		default:
			// More status text with no artifact answering, or the task
			// completes: the agent answers here.
			out = t.decideStatus(out, autoAnswer)
		}
		policy = t.statusPolicy()
	}
	if t.statusRole == autoAside && role != statusProgress {
		// Status text was progress; the task's question or closing
		// remark is shown on its own, and a closing remark answers.
		if role == statusCompletion {
			t.answered = true
		}
		return t.writeText(out, t.newStream("status-"+strconv.Itoa(int(role))+":"+string(t.taskID)), text)
	}
	s.text.WriteString(delta)
	if policy == StatusAsMessage {
		return t.writeText(out, s, delta)
	}
	switch {
	case role == statusQuestion:
		return t.writeText(out, t.newStream("status-question:"+string(t.taskID)), text)
	case role == statusCompletion || policy == StatusHidden:
		return out
	}
	return t.aside(out, s, delta, policy)
}

// decideByNext decides status text StatusAuto holds by the event after
// it, before that event is shown, so the held text keeps its place: answer
// text in an artifact or a reply makes it progress (artifactText decides
// then); anything else the task shows — more status text, data, a tool
// call, a surface — makes it the start of the answer. Events that show
// nothing (a bare state change) and the task's end (complete, fail,
// interrupt settle it) decide nothing here. Deciding at the next event
// keeps what is held to one event, which a translator taking the run over
// finds again in the task's snapshot.
func (t *Translator) decideByNext(out []agui.Event, ev a2a.Event) []agui.Event {
	if t.opt.StatusText != StatusAuto || t.statusRole != autoUndecided || t.status == nil || t.status.text.Len() == 0 {
		return out
	}
	var msg *a2a.Message
	switch e := ev.(type) {
	case *a2a.ArtifactUpdate:
		if e == nil || e.Artifact == nil || hasAnswerText(e.Artifact.Parts) || !hasParts(e.Artifact.Parts) {
			return out
		}
		return t.decideStatus(out, autoAnswer)
	case *a2a.StatusUpdate:
		if e != nil && !a2a.IsTerminal(e.Status.State) && !a2a.IsInterrupted(e.Status.State) {
			msg = e.Status.Message
		}
	case *a2a.Task:
		if e != nil && !a2a.IsTerminal(e.Status.State) && !a2a.IsInterrupted(e.Status.State) {
			msg = e.Status.Message
		}
	}
	if msg == nil || msg.Role == a2a.RoleUser || onlyText(msg) {
		return out // more status text is decided by statusText
	}
	return t.decideStatus(out, autoAnswer)
}

// onlyText reports a message whose parts are all text (thoughts included).
func onlyText(msg *a2a.Message) bool {
	if msg == nil {
		return true
	}
	for _, p := range msg.Parts {
		if p == nil {
			continue
		}
		if _, ok := p.Content.(a2a.TextPart); !ok {
			return false
		}
	}
	return true
}

// hasAnswerText reports parts with answer text (not a thought).
func hasAnswerText(parts []*a2a.Part) bool {
	for _, p := range parts {
		if p != nil && !isThought(p) && p.Text() != "" {
			return true
		}
	}
	return false
}

func hasParts(parts []*a2a.Part) bool {
	for _, p := range parts {
		if p != nil {
			return true
		}
	}
	return false
}

// autoDecision is what StatusAuto made of a task's status text.
type autoDecision int

const (
	autoUndecided autoDecision = iota
	autoAnswer                 // the agent answers in status messages
	autoAside                  // status text is progress
)

// statusPolicy is the policy in force for the task's status text: under
// StatusAuto, once decided, that of the decision.
func (t *Translator) statusPolicy() StatusTextPolicy {
	if t.opt.StatusText != StatusAuto {
		return t.opt.StatusText
	}
	switch t.statusRole {
	case autoAnswer:
		return StatusAsMessage
	case autoAside:
		return StatusAsActivity
	}
	return StatusAuto
}

// decideStatus fixes what the task's status text is, under StatusAuto, and
// shows what was held accordingly: as the start of the answer, or aside.
func (t *Translator) decideStatus(out []agui.Event, d autoDecision) []agui.Event {
	if t.opt.StatusText != StatusAuto || t.statusRole != autoUndecided || t.status == nil {
		return out
	}
	t.statusRole = d
	s := t.status
	held := strings.TrimPrefix(s.text.String(), s.shown.String())
	if strings.TrimSpace(held) == "" {
		return out
	}
	if d == autoAnswer {
		return t.writeText(out, s, held)
	}
	return t.aside(out, s, held, StatusAsActivity)
}

// settleStatus decides, as the task ends, status text StatusAuto still
// holds: the answer when asAnswer, else progress.
func (t *Translator) settleStatus(out []agui.Event, asAnswer bool) []agui.Event {
	if asAnswer {
		return t.decideStatus(out, autoAnswer)
	}
	return t.decideStatus(out, autoAside)
}

// aside shows progress text off the answer: as an activity (1.0 clients),
// reasoning (1.0, reasoning policy) or a CUSTOM "a2a.status" event (older
// clients reject activity and reasoning events).
func (t *Translator) aside(out []agui.Event, s *textStream, delta string, policy StatusTextPolicy) []agui.Event {
	switch {
	case t.opt.V1 && policy == StatusAsActivity:
		out = t.closeText(out)
		out = t.reportSent(out)
		if t.activityID == "" {
			t.activityID = t.id("activity", string(t.taskID))
		}
		return t.emit(out, &agui.ActivitySnapshot{MessageID: t.activityID, ActivityType: "a2a.status",
			Content: map[string]any{"state": stepName(t.state), "text": s.text.String()}})
	case t.opt.V1 && policy == StatusAsReasoning:
		return t.reason(out, delta)
	default:
		out = t.closeText(out)
		return t.custom(out, "a2a.status", map[string]any{"state": stepName(t.state), "text": delta})
	}
}

// answerFromStatus shows the accumulated status text as the answer when a
// non-message policy (or StatusAuto, having taken it for progress) kept it
// off screen and nothing else answered.
func (t *Translator) answerFromStatus(out []agui.Event) []agui.Event {
	// Under StatusAuto only text decided to be progress is still off
	// screen here: what was held is settled by now.
	if t.statusPolicy() == StatusAsMessage || t.opt.StatusText == StatusAuto && t.statusRole != autoAside ||
		t.answered || t.status == nil {
		return out
	}
	text := t.status.text.String()
	if strings.TrimSpace(text) == "" {
		return out
	}
	t.answered = true
	return t.writeText(out, t.newStream("status-answer:"+string(t.taskID)), text)
}

// artifactSource is the text-stream source of artifact id. The last one
// is kept: every chunk of a streamed artifact asks for the same, and
// building it anew was an allocation per chunk.
func (t *Translator) artifactSource(id a2a.ArtifactID) string {
	if t.lastArtifactSource == "" || t.lastArtifact != id {
		t.lastArtifact, t.lastArtifactSource = id, "artifact:"+string(id)
	}
	return t.lastArtifactSource
}

func (t *Translator) onArtifact(out []agui.Event, art *a2a.Artifact, appendParts, last bool) []agui.Event {
	source := t.artifactSource(art.ID)
	s := t.stream(source)
	if s != nil && (!appendParts || s.ended) {
		// AG-UI content is append-only: a replacement, or parts after the
		// last chunk, become a new message.
		out = t.endStream(out, s)
		s = nil
	}
	if s == nil {
		s = t.heldStream(source)
	}
	// Parts appended to an artifact are new; a replacement may repeat the
	// non-text parts already shown.
	skip := t.nonText[art.ID]
	if appendParts {
		skip = 0
	}
	out = t.artifactParts(out, s, art, appendParts, skip)
	if last {
		out = t.endStream(out, s)
	}
	return out
}

// onSnapshotArtifact maps an artifact carried by a Task: everything it
// holds beyond what was already streamed.
func (t *Translator) onSnapshotArtifact(out []agui.Event, art *a2a.Artifact) []agui.Event {
	source := t.artifactSource(art.ID)
	s := t.stream(source)
	if s == nil && t.earlier[art.ID] {
		t.remember(art)
		return out
	}
	full := partsText(art.Parts)
	if s != nil {
		seen := s.shown.String() + s.held
		switch {
		case full == seen || s.dropped:
		case strings.HasPrefix(full, seen):
			out = t.artifactText(out, s, full[len(seen):])
		default:
			out = t.endStream(out, s)
			s = t.newStream(source)
			s.holding = true
			out = t.artifactText(out, s, full)
		}
	} else {
		s = t.heldStream(source)
		out = t.artifactText(out, s, full)
	}
	out = t.artifactParts(out, s, &a2a.Artifact{ID: art.ID, Parts: nonTextOnly(art.Parts)}, false, t.nonText[art.ID])
	// A snapshot shows the artifact as it is now, not that it is complete:
	// the message closes (other sources may write next) but a later append
	// (SubscribeToTask goes on after its snapshot) continues it, and text
	// withheld as a possible repeat stays withheld until the artifact ends.
	if s.open {
		out = t.closeText(out)
	}
	return out
}

// artifactParts maps an artifact update's parts in order: text feeds the
// artifact's message, thoughts go to reasoning, data goes to the shared
// state (the first data part with the update's append flag, the rest
// appended), other parts to activities or CUSTOM events. skip counts parts
// of the last kind already mapped from an earlier snapshot.
func (t *Translator) artifactParts(out []agui.Event, s *textStream, art *a2a.Artifact, appendData bool, skip int) []agui.Event {
	seen := 0
	for _, p := range art.Parts {
		if p == nil {
			continue
		}
		if _, ok := p.Content.(a2a.TextPart); ok {
			out = t.textPart(out, s, p)
			continue
		}
		if _, ok := p.Content.(a2a.DataPart); ok && !isSpecialData(p) {
			t.putArtifactData(art.ID, p.Data(), appendData)
			appendData = true
			continue
		}
		seen++
		if seen <= skip {
			continue
		}
		t.nonText[art.ID]++
		out = t.nonTextPart(out, p, art.ID)
	}
	return t.flushA2UI(out)
}

// textPart routes a text part of an answer: thoughts to reasoning, the
// rest to the answer's message.
func (t *Translator) textPart(out []agui.Event, s *textStream, p *a2a.Part) []agui.Event {
	if isThought(p) {
		return t.reason(out, p.Text())
	}
	return t.artifactText(out, s, p.Text())
}

// artifactText writes artifact text, withholding the start of an artifact
// while it could still be a repeat of text already shown (the "status text
// repeated by a final artifact" pattern).
func (t *Translator) artifactText(out []agui.Event, s *textStream, text string) []agui.Event {
	if text == "" || s.dropped {
		return out
	}
	if s.holding {
		candidate := s.held + text
		if t.prefixOfOther(s, candidate) {
			s.held = candidate
			return out
		}
		s.holding, s.held = false, ""
		text = candidate
	}
	out = t.decideStatus(out, autoAside) // an artifact answers: status text was progress
	t.answered = true
	return t.writeText(out, s, text)
}

// endStream closes an artifact's message at its last chunk. Text still
// withheld is either a complete repeat (dropped) or flushed.
func (t *Translator) endStream(out []agui.Event, s *textStream) []agui.Event {
	out = t.resolveHeld(out, s)
	if s.open {
		out = t.closeText(out)
	}
	s.ended = true
	return out
}

func (t *Translator) resolveHeld(out []agui.Event, s *textStream) []agui.Event {
	if !s.holding || s.held == "" {
		return out
	}
	held := s.held
	s.holding, s.held = false, ""
	if t.repeatsOther(s, held) {
		s.dropped = true
		t.answered = true
		return out
	}
	out = t.decideStatus(out, autoAside)
	t.answered = true
	return t.writeText(out, s, held)
}

func (t *Translator) flushHeld(out []agui.Event) []agui.Event {
	for _, s := range t.streamOrder {
		out = t.resolveHeld(out, s)
	}
	return out
}

func (t *Translator) onMessage(out []agui.Event, msg *a2a.Message) []agui.Event {
	t.learn(msg.TaskID, msg.ContextID)
	if msg.Role == a2a.RoleUser {
		return out
	}
	s := t.heldStream("message:" + msg.ID)
	for _, p := range msg.Parts {
		if p == nil {
			continue
		}
		if _, ok := p.Content.(a2a.TextPart); ok {
			out = t.textPart(out, s, p)
			continue
		}
		out = t.nonTextPart(out, p, "")
	}
	out = t.endStream(out, s)
	// A Message reply is final: the agent created no task.
	return t.complete(out)
}

func (t *Translator) nonTextParts(out []agui.Event, msg *a2a.Message) []agui.Event {
	if msg == nil {
		return out
	}
	for _, p := range msg.Parts {
		if p == nil {
			continue
		}
		if _, ok := p.Content.(a2a.TextPart); ok {
			continue
		}
		out = t.nonTextPart(out, p, "")
	}
	return t.flushA2UI(out)
}

// nonTextPart maps a non-text part: function calls and responses to tool
// calls, the agent's UI keys and data to the shared state, files to an
// activity (1.0 clients) or CUSTOM event and to the state; anything else to
// CUSTOM, so nothing the agent sends is dropped silently.
func (t *Translator) nonTextPart(out []agui.Event, p *a2a.Part, artifactID a2a.ArtifactID) []agui.Event {
	if isA2UIPart(p) {
		// Shown with the message's other A2UI parts (flushA2UI), never as
		// state.
		t.queueA2UI(p)
		return out
	}
	switch kind, id, fname, args, response := functionCall(p); kind {
	case adkFunctionCall:
		out, _ = t.toolCall(out, id, fname, args)
		return out
	case adkFunctionResponse:
		if out, ok := t.toolResult(out, id, fname, response); ok {
			return out
		}
	}
	if isUIState(p) {
		t.mergeInto("ui", p.Data())
		return out
	}
	switch c := p.Content.(type) {
	case a2a.TextPart:
		return out
	case a2a.DataPart:
		if artifactID != "" {
			t.putArtifactData(artifactID, c.Value, false)
		} else {
			t.mergeInto("statusData", c.Value)
		}
		return out
	case a2a.URLPart, a2a.RawPart:
		return t.file(out, p, artifactID)
	}
	value := map[string]any{"taskId": string(t.taskID), "part": p}
	if artifactID != "" {
		value["artifactId"] = string(artifactID)
	}
	out = t.closeText(out)
	return t.custom(out, "a2a.part", value)
}

// file shows a file part: 1.0 clients get an ACTIVITY_SNAPSHOT of type
// a2a.file, older clients (which reject activities) a CUSTOM a2a.file, and
// the state lists it. Inline bytes travel as a data: URL up to the limit;
// above it the file is announced without them.
func (t *Translator) file(out []agui.Event, p *a2a.Part, artifactID a2a.ArtifactID) []agui.Event {
	info := map[string]any{}
	if p.MediaType != "" {
		info["mediaType"] = p.MediaType
	}
	if p.Filename != "" {
		info["name"] = p.Filename
	}
	if artifactID != "" {
		info["artifactId"] = string(artifactID)
	}
	switch c := p.Content.(type) {
	case a2a.URLPart:
		info["url"] = string(c)
	case a2a.RawPart:
		info["size"] = len(c)
		if len(c) <= t.opt.MaxInlineBytes {
			mt := p.MediaType
			if mt == "" {
				mt = "application/octet-stream"
			}
			info["url"] = "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(c)
		} else {
			info["omitted"] = fmt.Sprintf("the file's %d bytes are above the bridge's %d-byte limit for inline files", len(c), t.opt.MaxInlineBytes)
		}
	}
	stateInfo := maps.Clone(info)
	if u, _ := stateInfo["url"].(string); strings.HasPrefix(u, "data:") {
		// The state keeps the file's description, not its bytes.
		delete(stateInfo, "url")
	}
	t.addFile(stateInfo)
	out = t.closeText(out)
	out = t.reportSent(out)
	if t.opt.V1 {
		n := t.fileN
		t.fileN++
		return t.emit(out, &agui.ActivitySnapshot{MessageID: t.id("file", string(t.taskID), strconv.Itoa(n)),
			ActivityType: "a2a.file", Content: info})
	}
	return t.custom(out, "a2a.file", info)
}

// thoughts shows the thought parts of a status message as reasoning.
func (t *Translator) thoughts(out []agui.Event, msg *a2a.Message) []agui.Event {
	if msg == nil {
		return out
	}
	for _, p := range msg.Parts {
		if p != nil && isThought(p) {
			out = t.reason(out, p.Text())
		}
	}
	return out
}

// reason shows a thought: as reasoning for 1.0 clients; for older ones it
// stays out of the answer as a CUSTOM a2a.reasoning event.
func (t *Translator) reason(out []agui.Event, text string) []agui.Event {
	if text == "" {
		return out
	}
	out = t.closeText(out)
	if !t.opt.V1 {
		return t.custom(out, "a2a.reasoning", map[string]any{"taskId": string(t.taskID), "text": text})
	}
	if !t.reasoning {
		out = t.reportSent(out)
		t.reasoning = true
		t.reasoningN++
		t.openReasoning = t.id("reasoning", string(t.taskID), strconv.Itoa(t.reasoningN))
		rid := t.openReasoning
		out = t.emit(out, &agui.ReasoningStart{MessageID: rid})
		out = t.emit(out, &agui.ReasoningMessageStart{MessageID: rid, Role: agui.RoleReasoning})
	}
	return t.emit(out, &agui.ReasoningMessageContent{MessageID: t.openReasoning, Delta: text})
}

// isThought reports a text part the agent marks as its reasoning (ADK's
// adk_thought metadata, or a plain thought flag).
func isThought(p *a2a.Part) bool {
	if _, ok := p.Content.(a2a.TextPart); !ok {
		return false
	}
	for _, k := range []string{"adk_thought", "thought"} {
		if b, _ := p.Metadata[k].(bool); b {
			return true
		}
	}
	return false
}

// ExtensionURI is the bridge's A2A extension: an agent whose card declares
// it receives the client's state, context, forwarded props and frontend
// tools in message metadata, and may set UI state keys.
const ExtensionURI = "https://github.com/a2a-agui-bridge/bridge/ext/agui/v1"

// isUIState reports a data part marked by the extension as UI state.
func isUIState(p *a2a.Part) bool {
	m, _ := p.Metadata[ExtensionURI].(map[string]any)
	return m != nil && m["kind"] == "ui-state"
}

// isSpecialData reports data parts with a meaning beyond plain data.
func isSpecialData(p *a2a.Part) bool {
	if isUIState(p) || isSchemaPart(p) || isA2UIPart(p) {
		return true
	}
	if _, ok := mastraSuspension(p); ok {
		return true
	}
	kind, _, _, _, _ := functionCall(p)
	return kind != ""
}

// MaxInlineFileBytes bounds the raw file bytes forwarded inside a CUSTOM
// event; AG-UI clients fail on single SSE events above 10 MiB.
const MaxInlineFileBytes = 1 << 20

// custom emits a CUSTOM event; nothing may be open.
func (t *Translator) custom(out []agui.Event, name string, value any) []agui.Event {
	out = t.reportSent(out)
	raw, err := json.Marshal(value)
	if err != nil {
		raw, _ = json.Marshal(map[string]any{"error": "value could not be encoded: " + err.Error()})
	}
	return t.emit(out, &agui.Custom{Name: name, Value: raw})
}

// writeText appends delta to s's message, opening it (and closing any other
// open message) first.
func (t *Translator) writeText(out []agui.Event, s *textStream, delta string) []agui.Event {
	if delta == "" {
		return out
	}
	if t.open != s {
		out = t.closeText(out)
		out = t.closeReasoning(out)
		out = t.reportSent(out)
		out = t.syncState(out) // before the message opens, while legacy clients can take it
		if s.messageID == "" {
			s.messageID = t.id("message", s.key)
		}
		// Re-opening a message closed earlier (interleaved sources) appends
		// to it on 0.0.37+ clients (AGUI-PROTOCOL.md §5.4).
		out = t.emit(out, &agui.TextMessageStart{MessageID: s.messageID, Role: agui.RoleAssistant})
		s.open = true
		t.open = s
	}
	s.shown.WriteString(delta)
	t.recordText(s.messageID, delta)
	return t.emit(out, &agui.TextMessageContent{MessageID: s.messageID, Delta: delta})
}

func (t *Translator) closeText(out []agui.Event) []agui.Event {
	if t.open == nil {
		return out
	}
	s := t.open
	s.open = false
	t.open = nil
	out = t.emit(out, &agui.TextMessageEnd{MessageID: s.messageID})
	return t.syncState(out) // state changes waited for the message to close
}

func (t *Translator) closeReasoning(out []agui.Event) []agui.Event {
	if !t.reasoning {
		return out
	}
	t.reasoning = false
	rid := t.openReasoning
	out = t.emit(out, &agui.ReasoningMessageEnd{MessageID: rid})
	return t.emit(out, &agui.ReasoningEnd{MessageID: rid})
}

func (t *Translator) endStep(out []agui.Event) []agui.Event {
	if t.step == "" {
		return out
	}
	name := t.step
	t.step = ""
	return t.emit(out, &agui.StepFinished{StepName: name})
}

func (t *Translator) closeAll(out []agui.Event) []agui.Event {
	out = t.flushA2UI(out)
	out = t.closeText(out)
	out = t.closeReasoning(out)
	return t.endStep(out)
}

func (t *Translator) finish(out []agui.Event, terminal agui.Event) []agui.Event {
	out = t.reportSent(out)
	t.noteTask(nil)
	out = t.syncState(out)
	if t.opt.ViewPath != "" {
		// A nested run's end is the enclosing run's to show, or not, and
		// to stamp.
		out = append(out, terminal)
	} else {
		out = t.emit(out, terminal)
	}
	t.done = true
	return out
}

func (t *Translator) emit(out []agui.Event, e agui.Event) []agui.Event {
	redactEvent(e, t.opt.RedactKeys) // redact.go: the one pass every event takes
	if t.opt.Now != nil {
		agui.BaseOf(e).Timestamp = t.opt.Now()
	}
	return append(out, e)
}

// runEmitter is what a run's opening needs of a Translator or a Team.
type runEmitter interface {
	emit(out []agui.Event, e agui.Event) []agui.Event
	// emitSnapshot writes the run's whole state, without a new version.
	emitSnapshot(out []agui.Event) []agui.Event
	Conversation() []agui.Message
}

// openRun is how every run opens: RUN_STARTED, then the full state (the
// client's own keys as it sent them and the bridge's as the bridge knows
// them, so a client that missed a delta is whole again), then, when the
// client lacks some of the thread's conversation (reconcile), all of it.
func openRun(r runEmitter, threadID, runID string, v1, reconcile bool) []agui.Event {
	ev := &agui.RunStarted{ThreadID: threadID, RunID: runID}
	if v1 {
		ev.ProtocolVersion = "1.0"
	}
	out := r.emit(nil, ev)
	out = r.emitSnapshot(out)
	if reconcile {
		out = r.emit(out, &agui.MessagesSnapshot{Messages: r.Conversation()})
	}
	return out
}

// newStream starts a stream for source; a source seen before (a replaced
// artifact) gets a numbered key so its message id is new.
func (t *Translator) newStream(source string) *textStream {
	key := source
	if t.current[source] != nil {
		key = source + "#" + strconv.Itoa(len(t.streamOrder))
	}
	s := &textStream{key: key}
	t.current[source] = s
	t.streamOrder = append(t.streamOrder, s)
	return s
}

// prefixOfOther reports whether text could be the start of text another
// stream already showed.
func (t *Translator) prefixOfOther(self *textStream, text string) bool {
	n := normalize(text)
	if n == "" {
		return true
	}
	for _, s := range t.streamOrder {
		if s != self && foldedHasPrefix(s.shown.String(), n) {
			return true
		}
	}
	for _, p := range t.prior {
		if foldedHasPrefix(p.text, n) {
			return true
		}
	}
	return false
}

// repeatsOther reports whether text equals, ignoring white space, text
// another stream already showed. It runs for every status message, so
// texts that cannot match (more solid characters than text has bytes) are
// not normalized: a streamed answer costs each token, not all the text so
// far.
func (t *Translator) repeatsOther(self *textStream, text string) bool {
	if strings.TrimSpace(text) == "" {
		return true
	}
	n, folded := "", false
	same := func(other string, solid int) bool {
		if solid > len(text) {
			return false // normalize(other) is longer than normalize(text) can be
		}
		if !folded {
			n, folded = normalize(text), true
		}
		return normalize(other) == n
	}
	for _, s := range t.streamOrder {
		if s != self && same(s.shown.String(), s.shown.solid) {
			return true
		}
	}
	for _, p := range t.prior {
		if same(p.text, solidBytes(p.text)) {
			return true
		}
	}
	return false
}

// foldText is text with the count of its solid bytes: ASCII bytes other
// than white space, which normalize always keeps. So normalize(x) is at
// least solid bytes long, and texts with more solid bytes than another has
// bytes are told apart without normalizing them.
type foldText struct {
	strings.Builder
	solid int
}

func (f *foldText) WriteString(s string) {
	f.Builder.WriteString(s)
	f.solid += solidBytes(s)
}

func (f *foldText) Reset() {
	f.Builder.Reset()
	f.solid = 0
}

func solidBytes(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
		default:
			if c < utf8.RuneSelf {
				n++
			}
		}
	}
	return n
}

// foldedHasPrefix reports whether normalize(s) starts with prefix (itself
// normalized), normalizing only as much of s as needed.
func foldedHasPrefix(s, prefix string) bool {
	var b strings.Builder
	for f := range strings.FieldsSeq(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
		if b.Len() >= len(prefix) {
			break
		}
	}
	return strings.HasPrefix(b.String(), prefix)
}

// deltaFor returns what text adds to the stream: the suffix when text is
// cumulative (repeats everything so far), nothing when it repeats the
// stream exactly, else the whole text as an increment. An increment that
// starts a new sentence right after a finished one gets a line break so
// separate progress notes do not run together.
func (s *textStream) deltaFor(text string) string {
	so := s.text.String()
	switch {
	case so == "":
		return text
	case s.text.solid <= len(text) && normalize(text) == normalize(so):
		return ""
	case strings.HasPrefix(text, so):
		return text[len(so):]
	}
	last, _ := utf8.DecodeLastRuneInString(so)
	first, _ := utf8.DecodeRuneInString(text)
	if strings.ContainsRune(".!?…:", last) && unicode.IsUpper(first) {
		return "\n" + text
	}
	return text
}

// id names something of this run: unique per thread, run and kind.
func (t *Translator) id(kind string, parts ...string) string {
	run := runKey(t.opt.RunID, t.opt.Turn)
	name := append([]string{t.opt.ThreadID, run}, t.opt.IDScope...)
	return nameUUID(kind, append(name, parts...)...)
}

// runKey names a run in ids: its RunID, and its turn when the RunID was
// used before on the thread (Options.Turn), so that a resume reusing the
// interrupted run's id neither appends to that run's messages nor raises
// an interrupt with an id already answered.
func runKey(runID, turn string) string {
	if turn == "" {
		return runID
	}
	return runID + "\x00turn\x00" + turn
}

// nameUUID is a name-based (v5) UUID of kind and parts.
func nameUUID(kind string, parts ...string) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, p := range parts {
		b.WriteByte(0)
		b.WriteString(p)
	}
	return uuid.NewSHA1(idNamespace, []byte(b.String())).String()
}

// idNamespace scopes the bridge's name-based UUIDs.
var idNamespace = uuid.MustParse("8f0c2f4e-5b1d-4a57-9d8e-2a2a67a7b001")

func messageText(msg *a2a.Message) string {
	if msg == nil {
		return ""
	}
	return partsText(msg.Parts)
}

func partsText(parts []*a2a.Part) string {
	if len(parts) == 1 && parts[0] != nil && !isThought(parts[0]) {
		// The common case, once per streamed token: no copy.
		txt, _ := parts[0].Content.(a2a.TextPart)
		return string(txt)
	}
	var b strings.Builder
	for _, p := range parts {
		if p == nil {
			continue
		}
		if txt, ok := p.Content.(a2a.TextPart); ok && !isThought(p) {
			b.WriteString(string(txt))
		}
	}
	return b.String()
}

func nonTextOnly(parts []*a2a.Part) []*a2a.Part {
	var out []*a2a.Part
	for _, p := range parts {
		if p == nil {
			continue
		}
		if _, ok := p.Content.(a2a.TextPart); !ok {
			out = append(out, p)
		}
	}
	return out
}

// normalize folds white space so a repeat differing only in spacing or line
// breaks is still recognised.
func normalize(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// stepName turns TASK_STATE_INPUT_REQUIRED into input_required.
func stepName(s a2a.TaskState) string {
	// Known states without allocating: this runs for every status update.
	switch s {
	case a2a.TaskStateWorking:
		return "working"
	case a2a.TaskStateSubmitted:
		return "submitted"
	case a2a.TaskStateCompleted:
		return "completed"
	case a2a.TaskStateInputRequired:
		return "input_required"
	}
	name := strings.TrimPrefix(string(s), "TASK_STATE_")
	if name == "" {
		return "unspecified"
	}
	return strings.ToLower(name)
}
