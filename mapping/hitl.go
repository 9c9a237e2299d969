package mapping

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// Interrupt reasons and the tool-call metadata of server-executed calls.
const (
	ReasonToolCall = "tool_call"
	// ToolExecutionKey marks tool calls the remote agent executes, so a
	// frontend does not try to run them itself.
	ToolExecutionKey = "ag-ui:tool-execution"
)

// ADK's data-part convention for function calls (A2A DataPart metadata
// "adk_type"), which the bridge maps to AG-UI tool calls.
const (
	adkTypeKey          = "adk_type"
	adkFunctionCall     = "function_call"
	adkFunctionResponse = "function_response"
)

// ApprovalSchema is the responseSchema of a tool-call interrupt: approve or
// deny, optionally with replacement arguments (AGUI-PROTOCOL.md §4.3).
func ApprovalSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"approved":   map[string]any{"type": "boolean"},
			"editedArgs": map[string]any{"type": "object"},
		},
		"required": []any{"approved"},
	}
}

// ToolCallRef links an A2A function call to the AG-UI tool call that shows
// it, across runs.
type ToolCallRef struct {
	CallID     string          `json:"callId"`
	Name       string          `json:"name"`
	Args       json.RawMessage `json:"args,omitempty"`
	ToolCallID string          `json:"toolCallId"`
	// Frontend marks a call to one of the client's own tools.
	Frontend bool `json:"frontend,omitempty"`
	// Reported is set once TOOL_CALL_RESULT was sent for the call: a call
	// never gets two results, whichever run would report the second.
	Reported bool `json:"reported,omitempty"`
}

// SentToolResult is the answer the bridge sent the agent for one of its
// tool calls — an approval, an edit or a denial, as an ADK
// function_response — which the resumed run reports as the call's result
// (see Options.SentResults).
type SentToolResult struct {
	Call     ToolCallRef `json:"call"`
	Response any         `json:"response"`
}

// PendingInterrupt is an interrupt the run ended with, with what the bridge
// needs to answer it later.
type PendingInterrupt struct {
	Interrupt agui.Interrupt `json:"interrupt"`
	// ExpiresAt is enforced server-side even when it was not sent (0.0.x
	// clients block a thread forever on an expired interrupt, so they do
	// not get expiresAt).
	ExpiresAt time.Time    `json:"expiresAt,omitzero"`
	TaskID    string       `json:"taskId"`
	ContextID string       `json:"contextId"`
	State     string       `json:"state"`
	ToolCall  *ToolCallRef `json:"toolCall,omitempty"`
	// AnswerAs says how a tool call's answer travels to the agent.
	AnswerAs AnswerAs `json:"answerAs,omitempty"`
	// Member is the team member whose task raised it ("" for an agent's
	// own run): a team's resume routes the answer there.
	Member string `json:"member,omitempty"`
}

// proposal is a tool call the agent waits to have approved or answered.
type proposal struct {
	call     ToolCallRef
	schema   map[string]any
	question string         // the interrupt's message, when the call has its own
	meta     map[string]any // more interrupt metadata
	answer   AnswerAs
}

// appendProposal adds p unless the same call is proposed already (an agent
// may list it twice).
func appendProposal(list []proposal, p proposal) []proposal {
	for _, q := range list {
		if q.call.ToolCallID == p.call.ToolCallID {
			return list
		}
	}
	return append(list, p)
}

// functionCall decodes a data part in ADK's function_call or
// function_response form; kind is "" when p is neither.
func functionCall(p *a2a.Part) (kind string, id, name string, args json.RawMessage, response any) {
	t, _ := p.Metadata[adkTypeKey].(string)
	if t == "" {
		t, _ = p.Metadata["type"].(string)
	}
	if t != adkFunctionCall && t != adkFunctionResponse {
		return "", "", "", nil, nil
	}
	m, ok := p.Data().(map[string]any)
	if !ok {
		return "", "", "", nil, nil
	}
	id, _ = m["id"].(string)
	name, _ = m["name"].(string)
	if name == "" {
		return "", "", "", nil, nil
	}
	if t == adkFunctionCall {
		args, _ = json.Marshal(m["args"])
		if string(args) == "null" {
			args = json.RawMessage("{}")
		}
		return t, id, name, args, nil
	}
	return t, id, name, nil, m["response"]
}

// toolCall shows a function call the agent makes (or proposes) as an AG-UI
// tool call executed on the server. It returns the call's reference.
func (t *Translator) toolCall(out []agui.Event, callID, name string, args json.RawMessage) ([]agui.Event, ToolCallRef) {
	if callID == "" {
		callID = "call-" + strconv.Itoa(len(t.toolCalls)+1)
	}
	ref := ToolCallRef{CallID: callID, Name: name, Args: args,
		ToolCallID: ToolCallID(t.opt.ThreadID, string(t.taskID), callID)}
	if known, ok := t.toolCalls[callID]; ok && known.ToolCallID == ref.ToolCallID {
		// The same call again: ADK sends a long-running call as an
		// artifact and again in its INPUT_REQUIRED message, and a task
		// snapshot may repeat it. One call, one card.
		return out, known
	}
	parent := ""
	if t.open != nil {
		parent = t.open.messageID
	} else if t.lastMessage != "" {
		parent = t.lastMessage
	}
	out = t.closeText(out)
	out = t.reportSent(out)
	if parent == "" {
		parent = t.id("toolcall-message", callID)
	}
	// The A2A call id rides along so that a translator taking the run over
	// (resumeFrom) can match the call's later function_response.
	meta := map[string]any{ToolExecutionKey: "server", MetadataKey: map[string]any{"callId": callID}}
	out = t.emit(out, &agui.ToolCallStart{Base: agui.Base{Metadata: meta}, ToolCallID: ref.ToolCallID, ToolCallName: name, ParentMessageID: parent})
	meta = map[string]any{ToolExecutionKey: "server"}
	if len(args) > 0 {
		out = t.emit(out, &agui.ToolCallArgs{Base: agui.Base{Metadata: meta}, ToolCallID: ref.ToolCallID, Delta: string(args)})
	}
	out = t.emit(out, &agui.ToolCallEnd{Base: agui.Base{Metadata: meta}, ToolCallID: ref.ToolCallID})
	t.recordToolCall(parent, ref)
	t.toolCalls[callID] = ref
	return out, ref
}

// toolResult shows a function response for a call this thread knows as
// TOOL_CALL_RESULT on the call's original id; unknown calls stay CUSTOM.
// The agent's own result for a call wins over the answer the bridge sent
// for it, as long as that answer was not reported yet; a call already
// reported gets nothing more.
func (t *Translator) toolResult(out []agui.Event, callID, name string, response any) ([]agui.Event, bool) {
	ref, ok := t.toolCalls[callID]
	if !ok && callID == "" {
		// A response without an id answers the call of that name; the
		// first in id order, so the choice is the same on every replay.
		for _, r := range t.ToolCalls() {
			if r.Name == name {
				ref, ok = r, true
				break
			}
		}
	}
	if !ok {
		return out, false
	}
	t.unreported = slices.DeleteFunc(t.unreported, func(r SentToolResult) bool { return r.Call.CallID == ref.CallID })
	out = t.closeText(out)
	out = t.reportSent(out)
	return t.report(out, ref.CallID, response), true
}

// report emits TOOL_CALL_RESULT for the call once; nothing may be open.
func (t *Translator) report(out []agui.Event, callID string, response any) []agui.Event {
	ref := t.toolCalls[callID]
	if ref.Reported {
		return out
	}
	ref.Reported = true
	t.toolCalls[callID] = ref
	content, err := json.Marshal(response)
	if err != nil {
		content = []byte(`null`)
	}
	if msgID := t.opt.ClientResults[ref.ToolCallID]; msgID != "" {
		// The client holds a tool message for the call already: the
		// result becomes its content, in place. (An enclosing run,
		// Options.ViewPath, makes the snapshot its own.)
		t.runMessages = append(t.runMessages, &runMessage{msg: agui.Message{ID: msgID, Role: agui.RoleTool,
			ToolCallID: ref.ToolCallID, Content: agui.TextContent(string(content))}})
		return t.emit(out, &agui.MessagesSnapshot{Messages: t.Conversation()})
	}
	msgID := t.id("tool-result", ref.ToolCallID)
	out = t.emit(out, &agui.ToolCallResult{Base: agui.Base{Metadata: map[string]any{ToolExecutionKey: "server"}},
		MessageID: msgID, ToolCallID: ref.ToolCallID, Content: string(content), Role: agui.RoleTool})
	t.runMessages = append(t.runMessages, &runMessage{msg: agui.Message{ID: msgID, Role: agui.RoleTool,
		ToolCallID: ref.ToolCallID, Content: agui.TextContent(string(content))}})
	return out
}

// reportSent reports the answers the bridge sent for the agent's tool calls
// (Options.SentResults) once the agent has taken them: most agents (ADK
// among them) read the function_response and answer in text without
// echoing it, and the approved call would otherwise stay without a result
// in the UI. It runs before anything the agent shows, so the result comes
// before the answer; nothing may be open.
func (t *Translator) reportSent(out []agui.Event) []agui.Event {
	if !t.taken || len(t.unreported) == 0 {
		return out
	}
	sent := t.unreported
	t.unreported = nil
	for _, r := range sent {
		out = t.report(out, r.Call.CallID, r.Response)
	}
	return out
}

// ToolCallID is the AG-UI id of an A2A function call: stable for the thread,
// task and call, so a resumed run can answer the call made in an earlier one.
func ToolCallID(threadID, taskID, callID string) string {
	return nameUUID("toolcall", threadID, taskID, callID)
}

// runMessage is a message this run created, for MESSAGES_SNAPSHOT and the
// thread's record.
type runMessage struct {
	msg  agui.Message
	text strings.Builder
}

func (t *Translator) recordText(id, delta string) {
	for _, m := range t.runMessages {
		if m.msg.ID == id {
			m.text.WriteString(delta)
			return
		}
	}
	m := &runMessage{msg: agui.Message{ID: id, Role: agui.RoleAssistant}}
	m.text.WriteString(delta)
	t.runMessages = append(t.runMessages, m)
	t.lastMessage = id
}

func (t *Translator) recordToolCall(parent string, ref ToolCallRef) {
	call := agui.ToolCall{ID: ref.ToolCallID, Type: "function",
		Function: agui.FunctionCall{Name: ref.Name, Arguments: string(ref.Args)}}
	for _, m := range t.runMessages {
		if m.msg.ID == parent {
			m.msg.ToolCalls = append(m.msg.ToolCalls, call)
			return
		}
	}
	t.runMessages = append(t.runMessages, &runMessage{msg: agui.Message{ID: parent, Role: agui.RoleAssistant,
		ToolCalls: []agui.ToolCall{call}}})
	t.lastMessage = parent
}

// Messages returns the messages this run created, in order: assistant text
// (with any tool calls it holds) and tool results.
func (t *Translator) Messages() []agui.Message {
	out := make([]agui.Message, 0, len(t.runMessages))
	for _, m := range t.runMessages {
		msg := m.msg
		if m.text.Len() > 0 {
			msg.Content = agui.TextContent(m.text.String())
		}
		out = append(out, msg)
	}
	return out
}

// Conversation is the thread's messages after this run: the client's own
// (with its ids, activity excluded) followed by the run's. A run message
// with the id of one of the client's (a tool result in the client's own
// tool message, Options.ClientResults) takes its place.
func (t *Translator) Conversation() []agui.Message {
	var client []agui.Message
	if t.opt.Input != nil {
		client = t.opt.Input.Messages
	}
	return redactMessages(conversation(client, t.Messages()), t.opt.RedactKeys, t.frontendCalls)
}

// conversation joins the client's messages (activity left out) and a run's:
// a run message replaces the client's message of the same id in place, the
// others follow in order.
func conversation(client, run []agui.Message) []agui.Message {
	byID := make(map[string]int, len(run))
	for i, m := range run {
		byID[m.ID] = i
	}
	used := make(map[string]bool, len(client))
	out := make([]agui.Message, 0, len(client)+len(run))
	for _, m := range client {
		if m.Role == agui.RoleActivity {
			continue
		}
		if i, ok := byID[m.ID]; ok {
			m = run[i]
		}
		used[m.ID] = true
		out = append(out, m)
	}
	for _, m := range run {
		if !used[m.ID] {
			used[m.ID] = true
			out = append(out, m)
		}
	}
	return out
}

// ToolCalls returns the server tool calls this run showed or answered.
func (t *Translator) ToolCalls() []ToolCallRef {
	out := make([]ToolCallRef, 0, len(t.toolCalls))
	for _, r := range t.toolCalls {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ToolCallRef) int { return strings.Compare(a.ToolCallID, b.ToolCallID) })
	return out
}

// Interrupts returns the interrupts the run ended with.
func (t *Translator) Interrupts() []PendingInterrupt { return t.pending }

// StateKey is the default key of the shared state the bridge owns.
const StateKey = "a2a"

// State is the client's shared state with the bridge's key replaced by the
// run's view of the A2A task; every other key is the client's, untouched.
func (t *Translator) State() json.RawMessage { return t.stateSnapshot() }

// FrontendCalls are the calls to the client's own tools this run left
// pending: the next run's tool messages answer them.
func (t *Translator) FrontendCalls() []ToolCallRef { return t.frontendCalls }

// frontendToolCall shows a call to one of the client's tools (AG-UI
// frontend tools): the client executes it, so no server marker.
func (t *Translator) frontendToolCall(out []agui.Event, callID, name string, args json.RawMessage) []agui.Event {
	if callID == "" {
		callID = "call-" + strconv.Itoa(len(t.toolCalls)+len(t.frontendCalls)+1)
	}
	ref := ToolCallRef{CallID: callID, Name: name, Args: args,
		ToolCallID: ToolCallID(t.opt.ThreadID, string(t.taskID), callID), Frontend: true}
	if slices.ContainsFunc(t.frontendCalls, func(r ToolCallRef) bool { return r.ToolCallID == ref.ToolCallID }) {
		return out // the same call again (see toolCall)
	}
	if known, ok := t.toolCalls[callID]; ok && known.ToolCallID == ref.ToolCallID {
		// Shown already (from an artifact, before the agent asked the
		// client to run it): the client runs it now; one card.
		delete(t.toolCalls, callID)
		t.frontendCalls = append(t.frontendCalls, ref)
		return out
	}
	parent := t.lastMessage
	if t.open != nil {
		parent = t.open.messageID
	}
	out = t.closeText(out)
	out = t.reportSent(out)
	if parent == "" {
		parent = t.id("toolcall-message", callID)
	}
	out = t.emit(out, &agui.ToolCallStart{Base: agui.Base{Metadata: map[string]any{MetadataKey: map[string]any{"callId": callID}}},
		ToolCallID: ref.ToolCallID, ToolCallName: name, ParentMessageID: parent})
	if len(args) > 0 {
		out = t.emit(out, &agui.ToolCallArgs{ToolCallID: ref.ToolCallID, Delta: string(args)})
	}
	out = t.emit(out, &agui.ToolCallEnd{ToolCallID: ref.ToolCallID})
	t.recordToolCall(parent, ref)
	t.frontendCalls = append(t.frontendCalls, ref)
	return out
}

// isFrontendTool reports whether the request offered a tool of that name.
func (t *Translator) isFrontendTool(name string) bool {
	if t.opt.Input == nil {
		return false
	}
	for _, tool := range t.opt.Input.Tools {
		if tool.Name == name {
			return true
		}
	}
	return false
}

// interrupt ends the run waiting for the user. Proposed function calls
// become server tool calls awaiting approval (reason tool_call); otherwise
// the agent's question is one input_required (or auth_required) interrupt
// with the answer's schema when the agent gave one. The question is also
// shown as text (the only thing clients before 0.0.54 render), and the
// state and the complete conversation are snapshotted before RUN_FINISHED so
// the client holds what it needs to resume (AGUI-PROTOCOL.md §4.2).
func (t *Translator) interrupt(out []agui.Event, state a2a.TaskState, msg *a2a.Message) []agui.Event {
	out = t.statusText(out, msg, statusQuestion)
	var schema map[string]any
	var proposals []proposal
	var authDetails []any
	if msg != nil {
		for _, p := range msg.Parts {
			if p == nil {
				continue
			}
			if _, ok := p.Content.(a2a.TextPart); ok {
				continue
			}
			if m, ok := p.Data().(map[string]any); ok && isSchemaPart(p) && schema == nil {
				schema = m
				continue
			}
			if kind, id, name, args, _ := functionCall(p); kind == adkFunctionCall && state == a2a.TaskStateInputRequired && t.isFrontendTool(name) {
				out = t.frontendToolCall(out, id, name, args)
				continue
			}
			if kind, id, name, args, _ := functionCall(p); kind == adkFunctionCall && state == a2a.TaskStateInputRequired {
				var ref ToolCallRef
				out, ref = t.toolCall(out, id, name, args)
				proposals = appendProposal(proposals, proposal{call: ref, schema: ApprovalSchema()})
				continue
			}
			if sp, ok := mastraSuspension(p); ok && state == a2a.TaskStateInputRequired {
				var ref ToolCallRef
				out, ref = t.toolCall(out, sp.callID, sp.name, sp.args)
				pr := proposal{call: ref, schema: sp.schema, question: sp.question(), answer: AnswerResumeData}
				if sp.payload != nil {
					pr.meta = map[string]any{"suspendPayload": sp.payload}
				}
				proposals = appendProposal(proposals, pr)
				continue
			}
			if state == a2a.TaskStateAuthRequired {
				if d := p.Data(); d != nil {
					authDetails = append(authDetails, d)
					continue
				}
				if u := p.URL(); u != "" {
					authDetails = append(authDetails, map[string]any{"url": string(u)})
					continue
				}
			}
			out = t.nonTextPart(out, p, "")
		}
	}
	out = t.flushHeld(out)
	out = t.closeAll(out)
	out = t.reportSent(out) // before the snapshots, which hold its message

	question := strings.TrimSpace(messageText(msg))
	if question == "" {
		question = "The agent needs more input to continue."
	}
	meta := func(extra map[string]any) map[string]any {
		a := map[string]any{"agent": t.opt.Agent, "taskId": string(t.taskID), "contextId": t.contextID}
		for k, v := range extra {
			a[k] = v
		}
		return map[string]any{"a2a": a}
	}
	var expires time.Time
	if t.opt.InterruptTTL > 0 && t.opt.Now != nil {
		expires = time.UnixMilli(t.opt.Now()).Add(t.opt.InterruptTTL).UTC()
	}
	add := func(in agui.Interrupt, ref *ToolCallRef, answer AnswerAs) {
		if !expires.IsZero() && t.opt.V1 {
			in.ExpiresAt = expires.Format(time.RFC3339Nano)
		}
		in.ID = t.opt.InterruptPrefix + in.ID
		in = redactInterrupt(in, t.opt.RedactKeys)
		t.pending = append(t.pending, PendingInterrupt{Interrupt: in, ExpiresAt: expires, TaskID: string(t.taskID),
			ContextID: t.contextID, State: string(state), ToolCall: ref, AnswerAs: answer})
	}
	if len(proposals) == 0 && len(t.frontendCalls) > 0 {
		// The agent waits for the client's own tools: the run ends with the
		// calls pending (1.0 clients are told which), and the next run's
		// tool messages go back to the task.
		outcome := (*agui.Outcome)(nil)
		if t.opt.V1 {
			ids := make([]string, len(t.frontendCalls))
			for i, r := range t.frontendCalls {
				ids[i] = r.ToolCallID
			}
			outcome = &agui.Outcome{Type: agui.OutcomeSuccess, PendingToolCallIDs: ids}
		}
		return t.finish(out, &agui.RunFinished{ThreadID: t.opt.ThreadID, RunID: t.opt.RunID, Outcome: outcome})
	}
	switch {
	case len(proposals) > 0:
		for _, pr := range proposals {
			ref := pr.call
			message := question
			if pr.question != "" {
				message = pr.question
			}
			extra := map[string]any{"callId": ref.CallID, "toolName": ref.Name}
			for k, v := range pr.meta {
				extra[k] = v
			}
			add(agui.Interrupt{
				ID:             t.id("interrupt", string(t.taskID), ref.CallID),
				Reason:         ReasonToolCall,
				Message:        message,
				ToolCallID:     ref.ToolCallID,
				ResponseSchema: pr.schema,
				Metadata:       meta(extra),
			}, &ref, pr.answer)
		}
	case state == a2a.TaskStateAuthRequired:
		extra := map[string]any{}
		if len(authDetails) > 0 {
			extra["auth"] = authDetails
		}
		add(agui.Interrupt{ID: t.id("interrupt", string(t.taskID)), Reason: ReasonAuthRequired,
			Message: question, ResponseSchema: schema, Metadata: meta(extra)}, nil, AnswerFunctionResponse)
	default:
		add(agui.Interrupt{ID: t.id("interrupt", string(t.taskID)), Reason: ReasonInputRequired,
			Message: question, ResponseSchema: schema, Metadata: meta(nil)}, nil, AnswerFunctionResponse)
	}

	ids := make([]any, len(t.pending))
	for i, p := range t.pending {
		ids[i] = p.Interrupt.ID
	}
	t.noteTask(nil)
	t.setView("pendingInterrupts", ids)
	if t.opt.ViewPath == "" {
		// A nested run's snapshots are the enclosing run's.
		out = t.emitWholeView(out)
		out = t.emit(out, &agui.MessagesSnapshot{Messages: t.Conversation()})
	}
	interrupts := make([]agui.Interrupt, len(t.pending))
	for i, p := range t.pending {
		interrupts[i] = p.Interrupt
	}
	return t.finish(out, &agui.RunFinished{ThreadID: t.opt.ThreadID, RunID: t.opt.RunID,
		Outcome: &agui.Outcome{Type: agui.OutcomeInterrupt, Interrupts: interrupts}})
}
