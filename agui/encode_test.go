package agui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMarshal(t *testing.T) {
	t.Parallel()
	replace := false
	cases := []struct {
		name string
		e    Event
		want string
	}{
		{"run started", &RunStarted{ThreadID: "th-1", RunID: "run-1"},
			`{"type":"RUN_STARTED","threadId":"th-1","runId":"run-1"}`},
		{"base members first, in order", &TextMessageContent{Base: Base{Timestamp: 1700000000000, SubagentRunID: "sa"}, MessageID: "m", Delta: "d"},
			`{"type":"TEXT_MESSAGE_CONTENT","timestamp":1700000000000,"subagentRunId":"sa","messageId":"m","delta":"d"}`},
		{"metadata takes the generic path", &TextMessageEnd{Base: Base{Metadata: map[string]any{"finishReason": "stop"}}, MessageID: "m-2"},
			`{"type":"TEXT_MESSAGE_END","metadata":{"finishReason":"stop"},"messageId":"m-2"}`},
		{"no HTML escaping", &TextMessageContent{MessageID: "m", Delta: "<b>&</b>"},
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"<b>&</b>"}`},
		{"line breaks escaped", &TextMessageContent{MessageID: "m", Delta: "a\nb\r\u2028\u2029\x00"},
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"a\nb\r\u2028\u2029\u0000"}`},
		{"CUSTOM value null when unset (row 24)", &Custom{Name: "x"},
			`{"type":"CUSTOM","name":"x","value":null}`},
		{"CUSTOM empty value is null", &Custom{Name: "x", Value: json.RawMessage{}},
			`{"type":"CUSTOM","name":"x","value":null}`},
		{"RAW event null when unset", &Raw{Source: "a2a"},
			`{"type":"RAW","event":null,"source":"a2a"}`},
		{"STATE_SNAPSHOT snapshot null when unset", &StateSnapshot{},
			`{"type":"STATE_SNAPSHOT","snapshot":null}`},
		{"raw values compacted", &StateSnapshot{Snapshot: json.RawMessage("{\n  \"a\" : [1, 2]\n}")},
			`{"type":"STATE_SNAPSHOT","snapshot":{"a":[1,2]}}`},
		{"nil patch is []", &StateDelta{},
			`{"type":"STATE_DELTA","delta":[]}`},
		{"nil messages is []", &MessagesSnapshot{},
			`{"type":"MESSAGES_SNAPSHOT","messages":[]}`},
		{"patch ops", &ActivityDelta{MessageID: "a", ActivityType: "PLAN", Patch: []PatchOp{{Op: "add", Path: "/x", Value: json.RawMessage(`null`)}, {Op: "move", From: "/a", Path: "/b"}}},
			`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"PLAN","patch":[{"op":"add","path":"/x","value":null},{"op":"move","path":"/b","from":"/a"}]}`},
		{"activity snapshot replace false", &ActivitySnapshot{MessageID: "a", ActivityType: "a2a.file", Content: map[string]any{"url": "https://x/y?a=1&b=2"}, Replace: &replace},
			`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"a2a.file","content":{"url":"https://x/y?a=1&b=2"},"replace":false}`},
		{"interrupt outcome", &RunFinished{ThreadID: "t", RunID: "r", Outcome: &Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{{ID: "i", Reason: "input_required", Metadata: map[string]any{"a2a": map[string]any{"taskId": "task-9"}}}}}},
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"input_required","metadata":{"a2a":{"taskId":"task-9"}}}]}}`},
		{"tool call start", &ToolCallStart{ToolCallID: "tc", ToolCallName: "search", ParentMessageID: "m"},
			`{"type":"TOOL_CALL_START","toolCallId":"tc","toolCallName":"search","parentMessageId":"m"}`},
		{"text start with name", &TextMessageStart{MessageID: "m", Role: RoleAssistant, Name: "travel"},
			`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","name":"travel"}`},
		{"subagent finished without members", &SubagentFinished{Base: Base{SubagentRunID: "s"}},
			`{"type":"SUBAGENT_FINISHED","subagentRunId":"s"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Marshal(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("Marshal (-want +got):\n%s", diff)
			}
			back, err := Decode(got)
			if err != nil {
				t.Fatalf("Decode(Marshal(e)): %v", err)
			}
			again, err := Marshal(back)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(got), string(again)); diff != "" {
				t.Errorf("Marshal(Decode(b)) differs (-first +second):\n%s", diff)
			}
		})
	}
}

func TestMarshalErrors(t *testing.T) {
	t.Parallel()
	var nilEvent *TextMessageContent
	for name, e := range map[string]Event{
		"nil interface":   nil,
		"nil pointer":     nilEvent,
		"invalid raw":     &Custom{Name: "x", Value: json.RawMessage(`{"a":`)},
		"unsupported map": &Custom{Name: "x", Base: Base{Metadata: map[string]any{"f": func() {}}}},
	} {
		if b, err := Marshal(e); err == nil {
			t.Errorf("%s: Marshal = %s, want an error", name, b)
		}
	}
}

// TestMarshalNeverWritesNull covers the §6.7 rows about nulls (09, 10, 24,
// 29, 48, 56, 70–76): optional members left unset are omitted, so those
// streams cannot be produced from our types.
func TestMarshalNeverWritesNull(t *testing.T) {
	t.Parallel()
	for _, e := range []Event{
		&RunStarted{ThreadID: "t", RunID: "r"},
		&RunError{Message: "m"},
		&RunFinished{ThreadID: "t", RunID: "r", Outcome: &Outcome{Type: OutcomeInterrupt, Interrupts: []Interrupt{{ID: "i", Reason: "r"}}}},
		&TextMessageStart{MessageID: "m", Role: RoleAssistant},
		&ToolCallStart{ToolCallID: "tc", ToolCallName: "f"},
		&Raw{Event: json.RawMessage(`{}`)},
		&SubagentStarted{Base: Base{SubagentRunID: "s"}, Name: "n"},
		&MessagesSnapshot{Messages: []Message{{ID: "u", Role: RoleUser, Content: &Content{Kind: ContentParts, Parts: []ContentPart{{Type: PartImage, Source: &Source{Type: SourceURL, Value: "https://x"}}}}}}},
	} {
		b, err := Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("null")) {
			t.Errorf("%s: %s contains null", e.Type(), b)
		}
	}
}

// TestDecodeRejectsWhatClientsReject: the wire forms of the §6.7 rows our
// types cannot represent are decode errors, so a stream read back from the
// wire (end-to-end tests, the journal) cannot hide them.
func TestDecodeRejectsWhatClientsReject(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"09 metadata null":           `{"type":"RUN_STARTED","threadId":"t","runId":"r","metadata":null}`,
		"10 rawEvent":                `{"type":"RUN_STARTED","threadId":"t","runId":"r","rawEvent":null}`,
		"11 unknown type META":       `{"type":"META","metaType":"x","payload":{}}`,
		"12 unknown extra property":  `{"type":"RUN_STARTED","threadId":"t","runId":"r","foo":1}`,
		"21 float timestamp":         `{"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":1.5}`,
		"23 tool result parts":       `{"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"tc","content":[{"type":"text","text":"x"}]}`,
		"28 THINKING_START":          `{"type":"THINKING_START"}`,
		"29 parentMessageId null":    `{"type":"TOOL_CALL_START","toolCallId":"tc","toolCallName":"f","parentMessageId":null}`,
		"48 subagentRunId null":      `{"type":"TEXT_MESSAGE_END","messageId":"m","subagentRunId":null}`,
		"56 RUN_STARTED input":       `{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"tools":null}}`,
		"70 timestamp null":          `{"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":null}`,
		"71 name null":               `{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","name":null}`,
		"72 code null":               `{"type":"RUN_ERROR","message":"m","code":null}`,
		"73 parentRunId null":        `{"type":"RUN_STARTED","threadId":"t","runId":"r","parentRunId":null}`,
		"74 interrupt message null":  `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"r","message":null}]}}`,
		"75 source null":             `{"type":"RAW","event":{},"source":null}`,
		"unknown nested member":      `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success","extra":1}}`,
		"null message in snapshot":   `{"type":"MESSAGES_SNAPSHOT","messages":[null]}`,
		"no type":                    `{"threadId":"t"}`,
		"type not a string":          `{"type":1}`,
		"not an object":              `[1]`,
		"null":                       `null`,
		"case-insensitive member":    `{"type":"TEXT_MESSAGE_END","MessageId":"m"}`,
		"string for an integer":      `{"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":"1"}`,
		"tool call function not obj": `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"x","type":"function","function":1}]}]}`,
		"truncated":                  `{"type":"RUN_STARTED"`,
		"metadata not an object":     `{"type":"RUN_STARTED","threadId":"t","runId":"r","metadata":[1]}`,
		"interrupt id wrong type":    `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":1,"reason":"r"}]}}`,
		"patch op null":              `{"type":"STATE_DELTA","delta":[null]}`,
		"message content null":       `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u","role":"user","content":null}]}`,
	}
	for name, in := range cases {
		if e, err := Decode([]byte(in)); err == nil {
			t.Errorf("%s: Decode(%s) = %#v, want an error", name, in, e)
		}
	}
}

func TestDecodeAcceptsNullWhereAllowed(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"type":"CUSTOM","name":"x","value":null}`,
		`{"type":"RAW","event":null}`,
		`{"type":"STATE_SNAPSHOT","snapshot":null}`,
		`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":null}]}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m","metadata":{"k":null}}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"r","responseSchema":{"type":"object","default":null}}]}}`,
	} {
		if _, err := Decode([]byte(in)); err != nil {
			t.Errorf("Decode(%s): %v", in, err)
		}
	}
}

// TestDecodeEveryType round-trips one event of every type.
func TestDecodeEveryType(t *testing.T) {
	t.Parallel()
	yes := true
	events := []Event{
		&RunStarted{ThreadID: "t", RunID: "r", ParentRunID: "p", ProtocolVersion: "1.0"},
		&RunFinished{ThreadID: "t", RunID: "r", Result: json.RawMessage(`{"ok":true}`), Outcome: &Outcome{Type: OutcomeSuccess, PendingToolCallIDs: []string{"a"}}},
		&RunError{Message: "m", Code: "c"},
		&StepStarted{StepName: "s"}, &StepFinished{StepName: "s"},
		&TextMessageStart{MessageID: "m", Role: RoleAssistant}, &TextMessageContent{MessageID: "m", Delta: "d"},
		&TextMessageEnd{MessageID: "m"}, &TextMessageChunk{MessageID: "m", Role: RoleUser, Delta: "d", Name: "n"},
		&ToolCallStart{ToolCallID: "tc", ToolCallName: "f"}, &ToolCallArgs{ToolCallID: "tc", Delta: "{}"},
		&ToolCallEnd{ToolCallID: "tc"}, &ToolCallChunk{ToolCallID: "tc", ToolCallName: "f", ParentMessageID: "m", Delta: "{"},
		&ToolCallResult{MessageID: "r", ToolCallID: "tc", Content: "x", Role: RoleTool},
		&StateSnapshot{Snapshot: json.RawMessage(`[1]`)}, &StateDelta{Delta: []PatchOp{{Op: "remove", Path: "/a"}}},
		&MessagesSnapshot{Messages: []Message{
			{ID: "u", Role: RoleUser, Content: &Content{Kind: ContentParts, Parts: []ContentPart{{Type: PartText, Text: "hi"}, {Type: PartBinary, MimeType: "image/png", Data: "AAAA"}}}},
			{ID: "a", Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "tc", Type: "function", Function: FunctionCall{Name: "f", Arguments: "{}"}}}},
			{ID: "act", Role: RoleActivity, ActivityType: "PLAN", Content: &Content{Kind: ContentObject, Object: json.RawMessage(`{"a":1}`)}},
		}},
		&ActivitySnapshot{MessageID: "a", ActivityType: "T", Content: map[string]any{"k": "v"}, Replace: &yes},
		&ActivityDelta{MessageID: "a", ActivityType: "T", Patch: []PatchOp{{Op: "test", Path: "", Value: json.RawMessage(`{}`)}}},
		&Raw{Event: json.RawMessage(`"x"`), Source: "a2a"}, &Custom{Name: "n", Value: json.RawMessage(`0`)},
		&ReasoningStart{MessageID: "s"}, &ReasoningMessageStart{MessageID: "r", Role: RoleReasoning},
		&ReasoningMessageContent{MessageID: "r", Delta: "d"}, &ReasoningMessageEnd{MessageID: "r"},
		&ReasoningMessageChunk{MessageID: "r", Delta: "d"}, &ReasoningEnd{MessageID: "s"},
		&ReasoningEncryptedValue{Subtype: "message", EntityID: "r", EncryptedValue: "e"},
		&SubagentStarted{Base: Base{SubagentRunID: "s"}, Name: "n", Description: "d", ParentSubagentRunID: "p", ParentToolCallID: "tc", ParentMessageID: "m"},
		&SubagentFinished{Base: Base{SubagentRunID: "s"}, Result: json.RawMessage(`1`), Outcome: &SubagentOutcome{Type: "suspended", InterruptIDs: []string{"i"}}},
		&SubagentError{Base: Base{SubagentRunID: "s"}, Message: "m", Code: "c"},
	}
	seen := map[EventType]bool{}
	for _, e := range events {
		seen[e.Type()] = true
		b, err := Marshal(e)
		if err != nil {
			t.Fatalf("%s: %v", e.Type(), err)
		}
		back, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: Decode(%s): %v", e.Type(), b, err)
		}
		if diff := cmp.Diff(e, back); diff != "" {
			t.Errorf("%s: Decode(Marshal(e)) (-want +got):\n%s", e.Type(), diff)
		}
	}
	if len(seen) != 31 {
		t.Errorf("covered %d event types, want all 31", len(seen))
	}
}

// TestFastPathMatchesGeneric holds the hand-written encoder to
// encoding/json's bytes for tricky strings.
func TestFastPathMatchesGeneric(t *testing.T) {
	t.Parallel()
	for _, s := range fastPathStrings {
		checkFastPath(t, s)
	}
}

var fastPathStrings = []string{
	"", "plain", `quote " backslash \ slash /`, "\b\f\n\r\t\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "\u2028\u2029", "héllo wörld 🌍", "\xff\xfe invalid", "a\xc3", "\xed\xa0\x80 surrogate",
}

func checkFastPath(t *testing.T, s string) {
	t.Helper()
	for _, e := range []Event{
		&TextMessageContent{Base: Base{Timestamp: -5, SubagentRunID: s}, MessageID: s, Delta: s},
		&TextMessageStart{MessageID: s, Role: s, Name: s},
		&TextMessageEnd{Base: Base{Timestamp: 1}, MessageID: s},
		&ToolCallStart{ToolCallID: s, ToolCallName: s, ParentMessageID: s},
		&ToolCallArgs{ToolCallID: s, Delta: s},
		&ToolCallEnd{ToolCallID: s},
		&ReasoningMessageContent{MessageID: s, Delta: s},
	} {
		fast, ok := appendFast(nil, e)
		if !ok {
			t.Fatalf("%s did not take the fast path", e.Type())
		}
		generic, err := appendGeneric(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fast, generic) {
			t.Fatalf("%s of %q:\nfast    %s\ngeneric %s", e.Type(), s, fast, generic)
		}
	}
}

func FuzzMarshalFastPath(f *testing.F) {
	for _, s := range fastPathStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkFastPath(t, s) })
}

// FuzzDecode: Decode never panics, and whatever it accepts re-encodes to
// bytes that decode to the same event.
func FuzzDecode(f *testing.F) {
	for _, tc := range matrixCases {
		for _, e := range tc.events {
			b, _ := Marshal(e)
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err != nil {
			return
		}
		out, err := Marshal(e)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		back, err := Decode(out)
		if err != nil {
			t.Fatalf("Decode(Marshal(Decode(b))) = %v for %s", err, out)
		}
		again, err := Marshal(back)
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("not stable: %s then %s (%v)", out, again, err)
		}
	})
}

func TestAppendSSE(t *testing.T) {
	t.Parallel()
	dst := []byte(KeepAliveFrame)
	dst, err := AppendSSE(dst, &TextMessageContent{MessageID: "m", Delta: "line1\r\nline2"})
	if err != nil {
		t.Fatal(err)
	}
	want := ": keep-alive\n\n" + `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"line1\r\nline2"}` + "\n\n"
	if diff := cmp.Diff(want, string(dst)); diff != "" {
		t.Errorf("AppendSSE (-want +got):\n%s", diff)
	}
	// A failed event leaves dst as it was.
	before := string(dst)
	if out, err := AppendSSE(dst, &Custom{Name: "x", Value: json.RawMessage(`{`)}); err == nil || string(out) != before {
		t.Errorf("AppendSSE of an invalid event = %q, %v", out, err)
	}
}

// TestSSEFramesAreLFOnlyOneLine: every frame of every generated stream is
// exactly one data: line and its blank line, with no CR anywhere (§7.2).
func TestSSEFramesAreLFOnlyOneLine(t *testing.T) {
	t.Parallel()
	var events []Event
	for _, tc := range matrixCases {
		events = append(events, tc.events...)
	}
	events = append(events,
		&TextMessageContent{MessageID: "m", Delta: "a\r\nb\rc\nd\u2028"},
		&Custom{Name: "x", Value: json.RawMessage("{\r\n\"k\":\r\n\"v\\r\\n\"}")},
		&TextMessageEnd{Base: Base{Metadata: map[string]any{"k": "multi\r\nline"}}, MessageID: "m"},
	)
	for _, e := range events {
		frame, err := AppendSSE(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(frame, '\r') >= 0 {
			t.Errorf("frame contains CR: %q", frame)
		}
		s := string(frame)
		if !strings.HasPrefix(s, "data: {") || !strings.HasSuffix(s, "}\n\n") || strings.Count(s, "\n") != 2 {
			t.Errorf("frame is not one data line: %q", s)
		}
	}
	if strings.ContainsRune(KeepAliveFrame, '\r') || !strings.HasPrefix(KeepAliveFrame, ":") || !strings.HasSuffix(KeepAliveFrame, "\n\n") {
		t.Errorf("KeepAliveFrame %q is not an LF-terminated comment", KeepAliveFrame)
	}
}

func BenchmarkMarshal(b *testing.B) {
	e := &TextMessageContent{Base: Base{Timestamp: 1758000000000}, MessageID: "3f2b8c1e-6a47-4d1b-9a55-0c9e2d7f4b10", Delta: "It is 22 degrees in Lisbon, with a light \"breeze\" from the north.\n"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendSSE(b *testing.B) {
	e := &TextMessageContent{Base: Base{Timestamp: 1758000000000}, MessageID: "3f2b8c1e-6a47-4d1b-9a55-0c9e2d7f4b10", Delta: "It is 22 degrees in Lisbon, with a light \"breeze\" from the north.\n"}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendSSE(buf[:0], e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalGeneric is the encoding/json path, for comparison.
func BenchmarkMarshalGeneric(b *testing.B) {
	e := &TextMessageEnd{Base: Base{Metadata: map[string]any{"finishReason": "stop"}}, MessageID: "3f2b8c1e-6a47-4d1b-9a55-0c9e2d7f4b10"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(e); err != nil {
			b.Fatal(err)
		}
	}
}
