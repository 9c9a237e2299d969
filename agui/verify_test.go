package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var allGenerations = []Generation{Gen1_0, Gen0_0_59, Gen0_0_36}

// Event constructors that keep the tables readable.

func runStarted() Event { return &RunStarted{ThreadID: "th-1", RunID: "run-1"} }
func runFinished() Event {
	return &RunFinished{ThreadID: "th-1", RunID: "run-1"}
}
func runFinishedWith(o *Outcome) Event {
	return &RunFinished{ThreadID: "th-1", RunID: "run-1", Outcome: o}
}
func runError() Event { return &RunError{Message: "boom", Code: "a2a_failed"} }
func textStart(id string) Event {
	return &TextMessageStart{MessageID: id, Role: RoleAssistant}
}
func textContent(id, delta string) Event {
	return &TextMessageContent{MessageID: id, Delta: delta}
}
func textEnd(id string) Event { return &TextMessageEnd{MessageID: id} }
func toolStart(id string) Event {
	return &ToolCallStart{ToolCallID: id, ToolCallName: "search"}
}
func toolArgs(id string) Event { return &ToolCallArgs{ToolCallID: id, Delta: `{"q":1}`} }
func toolEnd(id string) Event  { return &ToolCallEnd{ToolCallID: id} }
func toolResult(id string) Event {
	return &ToolCallResult{MessageID: "tr-" + id, ToolCallID: id, Content: "{}", Role: RoleTool}
}
func stepStarted(name string) Event  { return &StepStarted{StepName: name} }
func stepFinished(name string) Event { return &StepFinished{StepName: name} }

// tagged sets the event's subagentRunId.
func tagged(tag string, e Event) Event {
	BaseOf(e).SubagentRunID = tag
	return e
}

func custom() Event { return &Custom{Name: "a2a.data", Value: json.RawMessage(`{"x":1}`)} }

// referenceStream is §10.4's normal run, the shape of matrix row 67.
func referenceStream() []Event {
	return []Event{
		&RunStarted{ThreadID: "th-1", RunID: "run-1"},
		&TextMessageStart{MessageID: "m-1", Role: RoleAssistant},
		&TextMessageContent{MessageID: "m-1", Delta: "Looking that up"},
		&TextMessageEnd{MessageID: "m-1"},
		&ToolCallStart{ToolCallID: "tc-1", ToolCallName: "search", ParentMessageID: "m-1"},
		&ToolCallArgs{ToolCallID: "tc-1", Delta: `{"q":"weather"}`},
		&ToolCallEnd{ToolCallID: "tc-1"},
		&ToolCallResult{MessageID: "tr-1", ToolCallID: "tc-1", Content: `{"temp":22}`, Role: RoleTool},
		&TextMessageStart{MessageID: "m-2", Role: RoleAssistant},
		&TextMessageContent{MessageID: "m-2", Delta: "It is 22 degrees."},
		&TextMessageEnd{Base: Base{Metadata: map[string]any{"finishReason": "stop"}}, MessageID: "m-2"},
		&RunFinished{ThreadID: "th-1", RunID: "run-1"},
	}
}

// outcome is the per-generation expectation: "" = the stream passes, else
// the rule of the first error.
type outcome [3]string

func (o outcome) of(g Generation) string { return o[g] }

// firstFailure feeds events to a fresh verifier and returns the rule of
// the first error and the index of the event that caused it.
func firstFailure(t *testing.T, g Generation, events []Event) (string, int) {
	t.Helper()
	v := NewVerifier(g)
	for i, e := range events {
		if err := v.Check(e); err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("event %d: error is %T, not *VerifyError: %v", i, err, err)
			}
			if ve.Generation != g || ve.Event != e.Type() {
				t.Errorf("event %d: error names %s/%s, want %s/%s", i, ve.Generation, ve.Event, g, e.Type())
			}
			return ve.Rule, i
		}
	}
	return "", -1
}

// matrixCases mirrors the rows of AGUI-PROTOCOL.md §6.7 that are about
// event order or values. Rows about wire spellings our types cannot
// produce (null members, unknown types or members, float timestamps, tool
// result parts, absent CUSTOM.value) are covered by TestMarshalNeverWritesNull
// and TestDecodeRejectsWhatClientsReject instead.
var matrixCases = []struct {
	row    string
	name   string
	events []Event
	want   outcome // 1.0.0, 0.0.59, 0.0.36
}{
	{"01", "baseline START/CONTENT/END", []Event{runStarted(), textStart("m1"), textContent("m1", "hi"), textEnd("m1"), runFinished()},
		outcome{"", "", ""}},
	{"02", "tool call opened inside an open text message", []Event{runStarted(), textStart("m1"), toolStart("tc1"), toolArgs("tc1"), toolEnd("tc1"), textContent("m1", "x"), textEnd("m1"), runFinished()},
		outcome{"", "", RuleInsideText}},
	{"03", "RUN_FINISHED with text open", []Event{runStarted(), textStart("m1"), textContent("m1", "hi"), runFinished()},
		outcome{RuleFinishWhileOpen, RuleFinishWhileOpen, RuleInsideText}},
	{"04", "CONTENT without START", []Event{runStarted(), textContent("m1", "hi")},
		outcome{RuleTextNotOpen, RuleTextNotOpen, RuleTextNotOpen}},
	{"05", "CUSTOM after RUN_FINISHED", []Event{runStarted(), runFinished(), custom()},
		outcome{RuleAfterRunFinished, RuleAfterRunFinished, RuleAfterRunFinished}},
	{"05", "text after RUN_FINISHED", []Event{runStarted(), runFinished(), textStart("m1")},
		outcome{RuleAfterRunFinished, RuleAfterRunFinished, RuleAfterRunFinished}},
	{"05", "RUN_ERROR after RUN_FINISHED is accepted", []Event{runStarted(), runFinished(), runError()},
		outcome{"", "", ""}},
	{"06", "two runs in one stream", []Event{runStarted(), runFinished(), &RunStarted{ThreadID: "th-1", RunID: "run-2"}, &RunFinished{ThreadID: "th-1", RunID: "run-2"}},
		outcome{"", "", RuleAfterRunFinished}},
	{"07", "RUN_STARTED after RUN_ERROR", []Event{runStarted(), runError(), runStarted(), runFinished()},
		outcome{"", "", RuleAfterRunError}},
	{"08", "text via CHUNK only, no END", []Event{runStarted(), &TextMessageChunk{MessageID: "m1", Delta: "a"}, &TextMessageChunk{Delta: "b"}, runFinished()},
		outcome{"", "", ""}},
	{"13", "interrupt outcome", []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{{ID: "int-1", Reason: "input_required", Message: "Which account?"}}})},
		outcome{"", "", ""}},
	{"14", "interrupt outcome with no interrupts", []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{}})},
		outcome{RuleOutcome, RuleOutcome, ""}},
	{"15", "success with pendingToolCallIds", []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeSuccess, PendingToolCallIDs: []string{"tc1"}})},
		outcome{"", RuleOutcome, ""}},
	{"16", "cancelled outcome", []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeCancelled})},
		outcome{"", RuleOutcome, ""}},
	{"17", "subagent lifecycle and tags", []Event{runStarted(),
		&SubagentStarted{Base: Base{SubagentRunID: "sa-1"}, Name: "travel"},
		tagged("sa-1", textStart("m1")), tagged("sa-1", textContent("m1", "hi")), tagged("sa-1", textEnd("m1")),
		&SubagentFinished{Base: Base{SubagentRunID: "sa-1"}},
		runFinished()},
		outcome{"", "", RuleUnknownType}},
	{"18", "reasoning CONTENT without START", []Event{runStarted(), &ReasoningMessageContent{MessageID: "r1", Delta: "hmm"}, runFinished()},
		outcome{RuleReasoningNotOpen, "", RuleUnknownType}},
	{"19", "full reasoning sequence", []Event{runStarted(),
		&ReasoningStart{MessageID: "s1"}, &ReasoningMessageStart{MessageID: "r1", Role: RoleReasoning},
		&ReasoningMessageContent{MessageID: "r1", Delta: "hmm"}, &ReasoningMessageEnd{MessageID: "r1"},
		&ReasoningEnd{MessageID: "s1"}, runFinished()},
		outcome{"", "", RuleUnknownType}},
	{"20", "RUN_FINISHED with a reasoning span open", []Event{runStarted(), &ReasoningStart{MessageID: "s1"}, runFinished()},
		outcome{RuleFinishWhileOpen, "", RuleUnknownType}},
	{"22", "STEP_FINISHED not started", []Event{runStarted(), stepFinished("plan")},
		outcome{RuleStepNotOpen, RuleStepNotOpen, RuleStepNotOpen}},
	{"22", "step open at RUN_FINISHED", []Event{runStarted(), stepStarted("plan"), runFinished()},
		outcome{RuleFinishWhileOpen, RuleFinishWhileOpen, RuleFinishWhileOpen}},
	{"25", "STATE_DELTA whose path does not apply", []Event{runStarted(), &StateDelta{Delta: []PatchOp{{Op: "remove", Path: "/missing/key"}}}, runFinished()},
		outcome{"", "", ""}},
	{"25", "STATE_DELTA with a malformed pointer", []Event{runStarted(), &StateDelta{Delta: []PatchOp{{Op: "replace", Path: "a/b", Value: json.RawMessage(`1`)}}}, runFinished()},
		outcome{RulePatch, "", ""}},
	{"26", "first event not RUN_STARTED", []Event{textStart("m1")},
		outcome{RuleFirstEvent, RuleFirstEvent, RuleFirstEvent}},
	{"27", "RUN_ERROR as the only event", []Event{runError()},
		outcome{"", "", ""}},
	{"30", "RUN_STARTED twice", []Event{runStarted(), runStarted()},
		outcome{RuleRunActive, RuleRunActive, RuleOneRunPerStream}},
	{"32", "empty delta", []Event{runStarted(), textStart("m1"), textContent("m1", ""), textEnd("m1"), runFinished()},
		outcome{"", "", RuleEmptyDelta}},
	{"33", `TEXT_MESSAGE_START role "tool"`, []Event{runStarted(), &TextMessageStart{MessageID: "m1", Role: RoleTool}},
		outcome{RuleRole, RuleRole, RuleRole}},
	{"36", "stream ends with no terminal event", []Event{runStarted(), textStart("m1"), textContent("m1", "hi")},
		outcome{"", "", ""}},
	{"37", "ARGS after END", []Event{runStarted(), toolStart("tc1"), toolEnd("tc1"), toolArgs("tc1")},
		outcome{RuleToolCallNotOpen, RuleToolCallNotOpen, RuleToolCallNotOpen}},
	{"38", "re-open a closed message id", []Event{runStarted(), textStart("m1"), textContent("m1", "a"), textEnd("m1"), textStart("m1"), textContent("m1", "b"), textEnd("m1"), runFinished()},
		outcome{"", "", ""}},
	{"39", "CHUNK after an explicit START, same id", []Event{runStarted(), textStart("m1"), &TextMessageChunk{MessageID: "m1", Delta: "x"}},
		outcome{RuleTextOpen, RuleTextOpen, RuleInsideText}},
	{"40", "TOOL_CALL_RESULT before TOOL_CALL_END", []Event{runStarted(), toolStart("tc1"), toolArgs("tc1"), toolResult("tc1"), toolEnd("tc1"), runFinished()},
		outcome{"", "", RuleInsideToolCall}},
	{"45", "STATE_SNAPSHOT null", []Event{runStarted(), &StateSnapshot{}, runFinished()},
		outcome{"", "", ""}},
	{"46", "tool call open at RUN_FINISHED", []Event{runStarted(), toolStart("tc1"), runFinished()},
		outcome{RuleFinishWhileOpen, RuleFinishWhileOpen, RuleInsideToolCall}},
	{"47", "TEXT_MESSAGE_START without role", []Event{runStarted(), &TextMessageStart{MessageID: "m1"}, textEnd("m1"), runFinished()},
		outcome{"", "", RuleRole}},
	{"59", "RUN_ERROR while text open", []Event{runStarted(), textStart("m1"), textContent("m1", "hi"), runError()},
		outcome{"", "", RuleInsideText}},
	{"63", "RUN_FINISHED ids differ from RUN_STARTED", []Event{runStarted(), &RunFinished{ThreadID: "other", RunID: "other"}},
		outcome{"", "", ""}},
	{"65", "two tool calls open in parallel", []Event{runStarted(), toolStart("a"), toolStart("b"), toolEnd("a"), toolEnd("b"), runFinished()},
		outcome{"", "", RuleInsideToolCall}},
	{"66", "same step name started twice", []Event{runStarted(), stepStarted("plan"), stepStarted("plan")},
		outcome{RuleStepOpen, RuleStepOpen, RuleStepOpen}},
	{"67", "text END, tool START/ARGS/END, RESULT, new text", referenceStream(),
		outcome{"", "", ""}},
}

func TestMatrix(t *testing.T) {
	t.Parallel()
	for _, tc := range matrixCases {
		for _, g := range allGenerations {
			t.Run(fmt.Sprintf("%s %s/%s", tc.row, tc.name, g), func(t *testing.T) {
				t.Parallel()
				got, at := firstFailure(t, g, tc.events)
				if want := tc.want.of(g); got != want {
					t.Errorf("rule = %q (at event %d), want %q", got, at, want)
				}
			})
		}
	}
}

// TestVerifierRules covers the §6.5 rules and value checks beyond the
// matrix rows: ownership, subagents, chunk expansion, reasoning and patch
// values.
func TestVerifierRules(t *testing.T) {
	t.Parallel()
	subStart := func(id string) Event { return &SubagentStarted{Base: Base{SubagentRunID: id}, Name: "agent"} }
	subEnd := func(id string) Event { return &SubagentFinished{Base: Base{SubagentRunID: id}} }
	cases := []struct {
		name   string
		events []Event
		want   outcome
	}{
		{"content tagged by another subagent", []Event{runStarted(), subStart("a"), subStart("b"), tagged("a", textStart("m1")), tagged("b", textContent("m1", "x"))},
			outcome{RuleOwnership, RuleOwnership, RuleUnknownType}},
		{"untagged content never disagrees", []Event{runStarted(), subStart("a"), tagged("a", textStart("m1")), textContent("m1", "x"), textEnd("m1"), subEnd("a"), runFinished()},
			outcome{"", "", RuleUnknownType}},
		{"re-open under another owner", []Event{runStarted(), textStart("m1"), textEnd("m1"), tagged("a", textStart("m1"))},
			outcome{RuleOwnership, RuleOwnership, ""}},
		{"tagged tool call under another owner's message", []Event{runStarted(), textStart("m1"), textEnd("m1"),
			tagged("a", &ToolCallStart{ToolCallID: "tc1", ToolCallName: "f", ParentMessageID: "m1"})},
			outcome{RuleOwnership, RuleOwnership, ""}},
		{"tool args from another owner", []Event{runStarted(), tagged("a", toolStart("tc1")), tagged("b", toolArgs("tc1"))},
			outcome{RuleOwnership, RuleOwnership, ""}},
		{"messages snapshot seeds owners", []Event{runStarted(),
			&MessagesSnapshot{Messages: []Message{{ID: "m1", Role: RoleAssistant, SubagentRunID: "a", Content: TextContent("hi")}}},
			tagged("b", textStart("m1"))},
			outcome{RuleOwnership, RuleOwnership, ""}},
		{"activity delta from another owner", []Event{runStarted(),
			tagged("a", &ActivitySnapshot{MessageID: "act", ActivityType: "PLAN", Content: map[string]any{}}),
			tagged("b", &ActivityDelta{MessageID: "act", ActivityType: "PLAN", Patch: []PatchOp{}})},
			outcome{RuleOwnership, RuleOwnership, RuleUnknownType}},
		{"encrypted value for another owner's tool call", []Event{runStarted(), tagged("a", toolStart("tc1")), tagged("a", toolEnd("tc1")),
			tagged("b", &ReasoningEncryptedValue{Subtype: "tool-call", EntityID: "tc1", EncryptedValue: "x"})},
			outcome{RuleOwnership, RuleOwnership, RuleUnknownType}},
		{"steps are keyed by owner", []Event{runStarted(), tagged("a", stepStarted("s")), stepStarted("s"), stepFinished("s"), tagged("a", stepFinished("s")), runFinished()},
			outcome{"", "", RuleStepOpen}},
		{"step finished by another owner", []Event{runStarted(), tagged("a", stepStarted("s")), tagged("b", stepFinished("s"))},
			outcome{RuleStepNotOpen, RuleStepNotOpen, ""}},
		{"subagent started twice", []Event{runStarted(), subStart("a"), subStart("a")},
			outcome{RuleSubagent, RuleSubagent, RuleUnknownType}},
		{"subagent restarted after finishing", []Event{runStarted(), subStart("a"), subEnd("a"), subStart("a")},
			outcome{RuleSubagent, RuleSubagent, RuleUnknownType}},
		{"subagent parent never started", []Event{runStarted(), &SubagentStarted{Base: Base{SubagentRunID: "a"}, Name: "x", ParentSubagentRunID: "p"}},
			outcome{RuleSubagent, RuleSubagent, RuleUnknownType}},
		{"subagent finished without start", []Event{runStarted(), subEnd("a")},
			outcome{RuleSubagent, RuleSubagent, RuleUnknownType}},
		{"subagent error without start", []Event{runStarted(), &SubagentError{Base: Base{SubagentRunID: "a"}, Message: "x"}},
			outcome{RuleSubagent, RuleSubagent, RuleUnknownType}},
		{"subagent open at RUN_FINISHED", []Event{runStarted(), subStart("a"), runFinished()},
			outcome{RuleFinishWhileOpen, RuleFinishWhileOpen, RuleUnknownType}},
		{"subagent without name", []Event{runStarted(), &SubagentStarted{Base: Base{SubagentRunID: "a"}}},
			outcome{RuleRequired, RuleRequired, RuleUnknownType}},
		{"subagent outcome suspended", []Event{runStarted(), subStart("a"), &SubagentFinished{Base: Base{SubagentRunID: "a"}, Outcome: &SubagentOutcome{Type: "suspended", InterruptIDs: []string{"i"}}}, runFinished()},
			outcome{"", "", RuleUnknownType}},
		{"subagent outcome unknown", []Event{runStarted(), subStart("a"), &SubagentFinished{Base: Base{SubagentRunID: "a"}, Outcome: &SubagentOutcome{Type: "failed"}}},
			outcome{RuleOutcome, RuleOutcome, RuleUnknownType}},
		{"interrupt without reason", []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{{ID: "i"}}})},
			outcome{RuleOutcome, RuleOutcome, ""}},
		{"interrupt without id", []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{{Reason: "confirmation"}}})},
			outcome{RuleOutcome, RuleOutcome, ""}},
		{"success outcome with interrupts", []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeSuccess, Interrupts: []Interrupt{{ID: "i", Reason: "r"}}})},
			outcome{"", RuleOutcome, ""}},
		{"unknown outcome type", []Event{runStarted(), runFinishedWith(&Outcome{Type: "error"})},
			outcome{RuleOutcome, RuleOutcome, ""}},
		{"explicit success outcome", []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeSuccess})},
			outcome{"", "", ""}},
		{"CUSTOM without name", []Event{runStarted(), &Custom{}},
			outcome{RuleRequired, RuleRequired, RuleRequired}},
		{"CUSTOM with null value", []Event{runStarted(), &Custom{Name: "x"}, runFinished()},
			outcome{"", "", ""}},
		{"empty tool call name", []Event{runStarted(), &ToolCallStart{ToolCallID: "tc1"}},
			outcome{RuleRequired, RuleRequired, RuleRequired}},
		{"empty run ids", []Event{&RunStarted{}},
			outcome{RuleRequired, RuleRequired, RuleRequired}},
		{"empty tool args delta", []Event{runStarted(), toolStart("tc1"), &ToolCallArgs{ToolCallID: "tc1"}, toolEnd("tc1"), runFinished()},
			outcome{"", "", ""}},
		{"text role user", []Event{runStarted(), &TextMessageStart{MessageID: "m1", Role: RoleUser}, textEnd("m1"), runFinished()},
			outcome{"", "", RuleRole}},
		{"text role unknown", []Event{runStarted(), &TextMessageStart{MessageID: "m1", Role: "robot"}},
			outcome{RuleRole, RuleRole, RuleRole}},
		{"tool result with role assistant", []Event{runStarted(), &ToolCallResult{MessageID: "r", ToolCallID: "tc", Content: "x", Role: RoleAssistant}},
			outcome{RuleRole, RuleRole, RuleRole}},
		{"tool result for an unknown call", []Event{runStarted(), toolResult("nope"), runFinished()},
			outcome{"", "", ""}},
		{"reasoning message role must be reasoning", []Event{runStarted(), &ReasoningMessageStart{MessageID: "r1", Role: RoleAssistant}},
			outcome{RuleRole, RuleRole, RuleUnknownType}},
		{"reasoning message started twice", []Event{runStarted(), &ReasoningMessageStart{MessageID: "r1", Role: RoleReasoning}, &ReasoningMessageStart{MessageID: "r1", Role: RoleReasoning}},
			outcome{RuleReasoningOpen, "", RuleUnknownType}},
		{"reasoning message open at RUN_FINISHED", []Event{runStarted(), &ReasoningMessageStart{MessageID: "r1", Role: RoleReasoning}, runFinished()},
			outcome{RuleFinishWhileOpen, "", RuleUnknownType}},
		{"encrypted value with unknown subtype", []Event{runStarted(), &ReasoningEncryptedValue{Subtype: "span", EntityID: "x", EncryptedValue: "y"}},
			outcome{RuleValue, RuleValue, RuleUnknownType}},
		{"activity snapshot with nil content", []Event{runStarted(), &ActivitySnapshot{MessageID: "a", ActivityType: "PLAN"}},
			outcome{RuleActivityContent, RuleActivityContent, RuleUnknownType}},
		{"activity snapshot and delta", []Event{runStarted(), &ActivitySnapshot{MessageID: "a", ActivityType: "PLAN", Content: map[string]any{"steps": []any{}}},
			&ActivityDelta{MessageID: "a", ActivityType: "PLAN", Patch: []PatchOp{{Op: "add", Path: "/steps/-", Value: json.RawMessage(`"x"`)}}}, runFinished()},
			outcome{"", "", RuleUnknownType}},
		{"activity delta with malformed pointer", []Event{runStarted(), &ActivityDelta{MessageID: "a", ActivityType: "PLAN", Patch: []PatchOp{{Op: "remove", Path: "/a~2"}}}},
			outcome{RulePatch, "", RuleUnknownType}},
		{"patch add without value", []Event{runStarted(), &StateDelta{Delta: []PatchOp{{Op: "add", Path: "/a"}}}},
			outcome{RulePatch, "", ""}},
		{"patch move without from", []Event{runStarted(), &StateDelta{Delta: []PatchOp{{Op: "move", Path: "/a"}}}},
			outcome{RulePatch, "", ""}},
		{"patch with unknown op is only warned about", []Event{runStarted(), &StateDelta{Delta: []PatchOp{{Op: "merge", Path: "nonsense"}}}, runFinished()},
			outcome{"", "", ""}},
		{"patch with escaped pointer", []Event{runStarted(), &StateDelta{Delta: []PatchOp{{Op: "copy", From: "/a~0b", Path: "/c~1d"}}}, runFinished()},
			outcome{"", "", ""}},
		{"timestamp beyond 2^53", []Event{&RunStarted{Base: Base{Timestamp: 1 << 53}, ThreadID: "t", RunID: "r"}},
			outcome{RuleTimestamp, "", ""}},
		{"snapshot with activity message", []Event{runStarted(), &MessagesSnapshot{Messages: []Message{{ID: "a", Role: RoleActivity, ActivityType: "PLAN", Content: &Content{Kind: ContentObject, Object: json.RawMessage(`{}`)}}}}, runFinished()},
			outcome{"", "", RuleMessage}},
		{"snapshot with tool message parts", []Event{runStarted(), &MessagesSnapshot{Messages: []Message{{ID: "t", Role: RoleTool, ToolCallID: "tc", Content: &Content{Kind: ContentParts, Parts: []ContentPart{{Type: PartText, Text: "x"}}}}}}, runFinished()},
			outcome{"", RuleMessage, RuleMessage}},
		{"snapshot with a file source", []Event{runStarted(), &MessagesSnapshot{Messages: []Message{{ID: "u", Role: RoleUser, Content: &Content{Kind: ContentParts, Parts: []ContentPart{{Type: PartImage, Source: &Source{Type: SourceFile, Value: "file-1"}}}}}}}, runFinished()},
			outcome{"", RuleMessage, RuleMessage}},
		{"snapshot message without content", []Event{runStarted(), &MessagesSnapshot{Messages: []Message{{ID: "u", Role: RoleUser}}}},
			outcome{RuleMessage, RuleMessage, RuleMessage}},
		{"snapshot tool call without type", []Event{runStarted(), &MessagesSnapshot{Messages: []Message{{ID: "a", Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "tc", Function: FunctionCall{Name: "f"}}}}}}},
			outcome{RuleMessage, RuleMessage, RuleMessage}},
		{"full snapshot", []Event{runStarted(), &MessagesSnapshot{Messages: []Message{
			{ID: "u", Role: RoleUser, Content: TextContent("hi")},
			{ID: "a", Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "tc", Type: "function", Function: FunctionCall{Name: "f", Arguments: "{}"}}}},
			{ID: "t", Role: RoleTool, ToolCallID: "tc", Content: TextContent("{}")},
		}}, runFinished()},
			outcome{"", "", ""}},
		// Chunk expansion (§6.4).
		{"first chunk without id", []Event{runStarted(), &TextMessageChunk{Delta: "x"}},
			outcome{RuleChunk, RuleChunk, RuleChunk}},
		{"chunk changes role", []Event{runStarted(), &TextMessageChunk{MessageID: "m1", Delta: "x"}, &TextMessageChunk{Role: RoleUser, Delta: "y"}},
			outcome{RuleChunk, RuleChunk, RuleRole}},
		{"new chunk id closes the previous message", []Event{runStarted(), &TextMessageChunk{MessageID: "m1", Delta: "x"}, &TextMessageChunk{MessageID: "m2", Delta: "y"}, runFinished()},
			outcome{"", "", ""}},
		{"tool chunk without name", []Event{runStarted(), &ToolCallChunk{ToolCallID: "tc1"}},
			outcome{RuleChunk, RuleChunk, RuleChunk}},
		{"chunked text interleaved with tool calls", []Event{runStarted(), &TextMessageChunk{MessageID: "m1", Delta: "x"}, toolStart("tc1"), toolEnd("tc1"),
			&TextMessageChunk{MessageID: "m1", Delta: "y"}, runFinished()},
			outcome{"", "", ""}},
		{"tool chunks then result", []Event{runStarted(), &ToolCallChunk{ToolCallID: "tc1", ToolCallName: "f", Delta: "{"}, &ToolCallChunk{Delta: "}"}, toolResult("tc1"), runFinished()},
			outcome{"", "", ""}},
		{"explicit content after a chunk stream was closed", []Event{runStarted(), &TextMessageChunk{MessageID: "m1", Delta: "x"}, textContent("m1", "y")},
			outcome{RuleTextNotOpen, RuleTextNotOpen, RuleTextNotOpen}},
		{"RAW does not close a chunk stream", []Event{runStarted(), &TextMessageChunk{MessageID: "m1", Delta: "x"}, &Raw{Source: "a2a"}, &TextMessageChunk{Delta: "y"}, runFinished()},
			outcome{"", "", ""}},
		{"reasoning chunks", []Event{runStarted(), &ReasoningMessageChunk{MessageID: "r1", Delta: "x"}, runFinished()},
			outcome{"", "", RuleUnknownType}},
		{"ambiguous chunk with several lanes open", []Event{runStarted(),
			tagged("a", &TextMessageChunk{MessageID: "m1", Delta: "x"}), tagged("b", &TextMessageChunk{MessageID: "m2", Delta: "y"}),
			&TextMessageChunk{Delta: "z"}},
			outcome{RuleChunk, "", ""}},
		{"a chunk lane per subagent on 1.0", []Event{runStarted(),
			tagged("a", &TextMessageChunk{MessageID: "m1", Delta: "x"}), tagged("b", &TextMessageChunk{MessageID: "m2", Delta: "y"}),
			tagged("a", &TextMessageChunk{Delta: "z"}), runFinished()},
			outcome{"", RuleOwnership, ""}},
	}
	for _, tc := range cases {
		for _, g := range allGenerations {
			t.Run(tc.name+"/"+g.String(), func(t *testing.T) {
				t.Parallel()
				got, at := firstFailure(t, g, tc.events)
				if want := tc.want.of(g); got != want {
					t.Errorf("rule = %q (at event %d), want %q", got, at, want)
				}
			})
		}
	}
}

func TestVerifyErrorMessage(t *testing.T) {
	t.Parallel()
	v := NewVerifier(Gen0_0_59)
	for _, e := range []Event{runStarted(), textStart("m1")} {
		if err := v.Check(e); err != nil {
			t.Fatal(err)
		}
	}
	err := v.Check(runFinished())
	want := `agui: @ag-ui/client 0.0.59 rejects RUN_FINISHED: text messages are still active: "m1" [finish-while-open]`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	var nilEvent *TextMessageEnd
	if err := v.Check(nilEvent); err == nil {
		t.Error("a nil event was accepted")
	}
}

// eventAlphabet is a small universe of events over two ids and two
// producers, so random sequences hit open/close collisions, ownership
// conflicts, chunk lanes and terminal events often.
func eventAlphabet() []func() Event {
	var out []func() Event
	for _, tag := range []string{"", "s1"} {
		for _, id := range []string{"a", "b"} {
			out = append(out,
				func() Event { return tagged(tag, textStart(id)) },
				func() Event { return tagged(tag, textContent(id, "x")) },
				func() Event { return tagged(tag, textEnd(id)) },
				func() Event { return tagged(tag, toolStart(id)) },
				func() Event { return tagged(tag, toolArgs(id)) },
				func() Event { return tagged(tag, toolEnd(id)) },
				func() Event { return tagged(tag, toolResult(id)) },
				func() Event { return tagged(tag, stepStarted(id)) },
				func() Event { return tagged(tag, stepFinished(id)) },
				func() Event { return tagged(tag, &ReasoningStart{MessageID: id}) },
				func() Event { return tagged(tag, &ReasoningEnd{MessageID: id}) },
				func() Event { return tagged(tag, &ReasoningMessageStart{MessageID: id, Role: RoleReasoning}) },
				func() Event { return tagged(tag, &ReasoningMessageContent{MessageID: id, Delta: "x"}) },
				func() Event { return tagged(tag, &ReasoningMessageEnd{MessageID: id}) },
				func() Event { return tagged(tag, &TextMessageChunk{MessageID: id, Delta: "x"}) },
				func() Event { return tagged(tag, &ToolCallChunk{ToolCallID: id, ToolCallName: "f", Delta: "x"}) },
				func() Event { return tagged(tag, &ReasoningMessageChunk{MessageID: id, Delta: "x"}) },
				func() Event {
					return tagged(tag, &ActivitySnapshot{MessageID: id, ActivityType: "T", Content: map[string]any{}})
				},
				func() Event { return tagged(tag, &ActivityDelta{MessageID: id, ActivityType: "T", Patch: []PatchOp{}}) },
				func() Event {
					return tagged(tag, &ReasoningEncryptedValue{Subtype: "message", EntityID: id, EncryptedValue: "x"})
				},
			)
		}
		out = append(out,
			func() Event { return tagged(tag, custom()) },
			func() Event { return tagged(tag, &Raw{Event: json.RawMessage(`{}`)}) },
			func() Event { return tagged(tag, &StateSnapshot{Snapshot: json.RawMessage(`{}`)}) },
			func() Event { return &TextMessageChunk{Delta: "y"} },
		)
	}
	out = append(out,
		runStarted, runFinished, runError,
		func() Event { return &SubagentStarted{Base: Base{SubagentRunID: "s1"}, Name: "n"} },
		func() Event { return &SubagentFinished{Base: Base{SubagentRunID: "s1"}} },
		func() Event {
			return &MessagesSnapshot{Messages: []Message{{ID: "a", Role: RoleAssistant, SubagentRunID: "s1"}}}
		},
	)
	return out
}

func randomStream(r *rand.Rand, alphabet []func() Event, n int) []Event {
	events := make([]Event, n)
	events[0] = runStarted()
	for i := 1; i < n; i++ {
		events[i] = alphabet[r.IntN(len(alphabet))]()
	}
	return events
}

var verifierState = cmp.Options{cmp.AllowUnexported(Verifier{}, entity{}, stepKey{}, chunkStream{})}

// TestVerifierRejectionLeavesStateUnchanged is the property the Guard and
// the bridge's writer rely on: a rejected event is as if never sent.
func TestVerifierRejectionLeavesStateUnchanged(t *testing.T) {
	t.Parallel()
	alphabet := eventAlphabet()
	r := rand.New(rand.NewPCG(1, 2))
	rejected := 0
	for range 300 {
		events := randomStream(r, alphabet, 40)
		for _, g := range allGenerations {
			v := NewVerifier(g)
			for i, e := range events {
				before := v.clone()
				if err := v.Check(e); err != nil {
					rejected++
					if diff := cmp.Diff(before, v, verifierState); diff != "" {
						t.Fatalf("%s: event %d (%s) was rejected (%v) but changed the state (-before +after):\n%s", g, i, e.Type(), err, diff)
					}
				}
			}
		}
	}
	if rejected == 0 {
		t.Fatal("the random streams never exercised a rejection")
	}
}

// TestVerifierDeterministic: the same stream gives the same verdicts, in
// particular the same error text (no map-order leaks into messages).
func TestVerifierDeterministic(t *testing.T) {
	t.Parallel()
	alphabet := eventAlphabet()
	r := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		events := randomStream(r, alphabet, 30)
		for _, g := range allGenerations {
			verdicts := func() []string {
				v := NewVerifier(g)
				var out []string
				for _, e := range events {
					if err := v.Check(e); err != nil {
						out = append(out, err.Error())
					} else {
						out = append(out, "")
					}
				}
				return out
			}
			if diff := cmp.Diff(verdicts(), verdicts()); diff != "" {
				t.Fatalf("%s: verdicts differ between two runs:\n%s", g, diff)
			}
		}
	}
}

// sequentialStream generates a stream in the shape every generation
// accepts (matrix row 67, §10.1): one thing open at a time, closed before
// the next opens, tool results after END, one terminal event.
func sequentialStream(r *rand.Rand) []Event {
	events := []Event{runStarted()}
	n := 0
	id := func(p string) string { n++; return fmt.Sprintf("%s-%d", p, n) }
	for range r.IntN(12) {
		switch r.IntN(5) {
		case 0:
			m := id("m")
			events = append(events, textStart(m))
			for range 1 + r.IntN(3) {
				events = append(events, textContent(m, "δ\n<b>\u2028"))
			}
			events = append(events, textEnd(m))
		case 1:
			tc := id("tc")
			events = append(events, toolStart(tc), toolArgs(tc), toolEnd(tc))
			if r.IntN(2) == 0 {
				events = append(events, toolResult(tc))
			}
		case 2:
			s := id("step")
			events = append(events, stepStarted(s), &StateDelta{Delta: []PatchOp{{Op: "add", Path: "/a2a/x", Value: json.RawMessage(`1`)}}}, stepFinished(s))
		case 3:
			events = append(events, custom(), &Raw{Event: json.RawMessage(`{"k":[1]}`), Source: "a2a"}, &StateSnapshot{Snapshot: json.RawMessage(`{}`)})
		case 4:
			events = append(events, &TextMessageChunk{MessageID: id("c"), Delta: "x"}, &TextMessageChunk{Delta: "y"})
		}
	}
	if r.IntN(3) == 0 {
		return append(events, runError())
	}
	return append(events, runFinished())
}

func TestSequentialStreamsPassEverywhere(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		events := sequentialStream(r)
		for _, g := range allGenerations {
			if rule, at := firstFailure(t, g, events); rule != "" {
				t.Fatalf("%s rejects event %d (%s) of a sequential stream: %s", g, at, events[at].Type(), rule)
			}
		}
		for _, v1 := range []bool{false, true} {
			g := NewGuard(v1)
			for i, e := range events {
				if err := g.Check(e); err != nil {
					t.Fatalf("guard(v1=%v) rejects event %d: %v", v1, i, err)
				}
			}
			if !g.Terminated() {
				t.Fatal("guard did not see the terminal event")
			}
		}
		// And the wire form decodes back to an equivalent stream.
		var buf bytes.Buffer
		for _, e := range events {
			b, err := Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		g := NewGuard(false)
		for line := range bytes.Lines(buf.Bytes()) {
			e, err := Decode(bytes.TrimSuffix(line, []byte("\n")))
			if err != nil {
				t.Fatalf("decode %s: %v", line, err)
			}
			if err := g.Check(e); err != nil {
				t.Fatalf("decoded stream rejected: %v", err)
			}
		}
	}
}

// FuzzVerifier decodes each line of the input as an event and feeds the
// events to every verifier and guard: nothing may panic, and an accepted
// event must leave the guard consistent with its verifiers.
func FuzzVerifier(f *testing.F) {
	for _, tc := range matrixCases {
		var buf bytes.Buffer
		for _, e := range tc.events {
			b, err := Marshal(e)
			if err != nil {
				f.Fatal(err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n" + `{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"x","subagentRunId":"a"}` + "\n" + `{"type":"TOOL_CALL_CHUNK","delta":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		verifiers := []*Verifier{NewVerifier(Gen1_0), NewVerifier(Gen0_0_59), NewVerifier(Gen0_0_36)}
		guards := []*Guard{NewGuard(true), NewGuard(false)}
		for line := range bytes.Lines(data) {
			e, err := Decode(bytes.TrimSpace(line))
			if err != nil {
				continue
			}
			for _, v := range verifiers {
				_ = v.Check(e)
			}
			for _, g := range guards {
				_ = g.Check(e)
			}
			if _, err := Marshal(e); err != nil {
				// Decoded values are valid JSON, so they re-encode.
				t.Fatalf("re-marshal %s: %v", e.Type(), err)
			}
		}
	})
}
