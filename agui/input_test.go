package agui

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The bodies the real clients send, captured by a Go server
// (AGUI-PROTOCOL.md §3.1).
const (
	body1_0  = `{"threadId":"t1","runId":"r1","protocolVersion":"1.0","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}`
	body0_59 = `{"threadId":"t1","runId":"r1","tools":[],"context":[],"forwardedProps":{},"state":{},"messages":[]}`
)

func TestDecodeRunAgentInputRealClients(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		want *RunAgentInput
		v1   bool
	}{
		{"1.0.0", body1_0, &RunAgentInput{ThreadID: "t1", RunID: "r1", ProtocolVersion: "1.0",
			State: json.RawMessage(`{}`), Messages: []Message{}, ForwardedProps: json.RawMessage(`{}`)}, true},
		{"0.0.59", body0_59, &RunAgentInput{ThreadID: "t1", RunID: "r1",
			State: json.RawMessage(`{}`), Messages: []Message{}, ForwardedProps: json.RawMessage(`{}`)}, false},
		{"minimal", `{"threadId":"t","runId":"r"}`, &RunAgentInput{ThreadID: "t", RunID: "r", Messages: []Message{}}, false},
		{"nulls are absent", `{"threadId":"t","runId":"r","state":null,"messages":null,"tools":null,"context":null,"forwardedProps":null,"resume":null,"parentRunId":null}`,
			&RunAgentInput{ThreadID: "t", RunID: "r", Messages: []Message{}}, false},
		{"unknown members ignored", ` {"threadId":"t","runId":"r","thread_id":"x","future":{"a":[1]}} `,
			&RunAgentInput{ThreadID: "t", RunID: "r", Messages: []Message{}}, false},
		{"later 1.x", `{"threadId":"t","runId":"r","protocolVersion":"1.2"}`,
			&RunAgentInput{ThreadID: "t", RunID: "r", ProtocolVersion: "1.2", Messages: []Message{}}, true},
		{"forwardedProps of any type", `{"threadId":"t","runId":"r","forwardedProps":[1,"a"],"state":"s"}`,
			&RunAgentInput{ThreadID: "t", RunID: "r", Messages: []Message{}, ForwardedProps: json.RawMessage(`[1,"a"]`), State: json.RawMessage(`"s"`)}, false},
		{"tools, context and resume", `{"threadId":"t","runId":"r3","parentRunId":"r2",
			"tools":[{"name":"confirm","description":"Ask","parameters":{"type":"object"},"metadata":{"a2ui":true,"n":12345678901234567890}}],
			"context":[{"description":"tz","value":"Europe/Lisbon"}],
			"resume":[{"interruptId":"int-1","status":"resolved","payload":{"account":"ops"}},{"interruptId":"int-2","status":"cancelled","metadata":{"sig":"x"}}]}`,
			&RunAgentInput{ThreadID: "t", RunID: "r3", ParentRunID: "r2", Messages: []Message{},
				Tools:   []Tool{{Name: "confirm", Description: "Ask", Parameters: json.RawMessage(`{"type":"object"}`), Metadata: map[string]any{"a2ui": true, "n": json.Number("12345678901234567890")}}},
				Context: []ContextItem{{Description: "tz", Value: "Europe/Lisbon"}},
				Resume: []ResumeEntry{{InterruptID: "int-1", Status: ResumeResolved, Payload: json.RawMessage(`{"account":"ops"}`)},
					{InterruptID: "int-2", Status: ResumeCancelled, Metadata: map[string]any{"sig": "x"}}}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeRunAgentInput([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecodeRunAgentInput (-want +got):\n%s", diff)
			}
			if got.IsV1() != tc.v1 {
				t.Errorf("IsV1() = %v, want %v", got.IsV1(), tc.v1)
			}
		})
	}
}

func TestIsV1(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"": false, "1.0": true, "1.1": true, "1.10": true, "0.0": false, "2.0": false, "1": false, "1.": false, "1.x": false, "v1.0": false, "1.0.0": false} {
		if got := (&RunAgentInput{ProtocolVersion: v}).IsV1(); got != want {
			t.Errorf("IsV1(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestDecodeMessages covers every message role and every content form a
// client generation sends (§2.11, §3.2).
func TestDecodeMessages(t *testing.T) {
	t.Parallel()
	body := `{"threadId":"t","runId":"r","messages":[
		{"id":"d","role":"developer","content":"be brief"},
		{"id":"s","role":"system","content":"sys","name":"policy"},
		{"id":"u1","role":"user","content":"hello","metadata":{"k":null}},
		{"id":"u2","role":"user","content":[
			{"type":"text","text":"look"},
			{"type":"image","source":{"type":"data","value":"iVBORw0=","mimeType":"image/png"},"metadata":{"filename":"a.png"}},
			{"type":"audio","source":{"type":"url","value":"https://x/a.mp3"}},
			{"type":"video","source":{"type":"url","value":"https://x/v.mp4","mimeType":"video/mp4"},"id":"p1"},
			{"type":"document","source":{"type":"file","value":"file-abc","provider":"openai","mimeType":"application/pdf"}},
			{"type":"binary","mimeType":"image/jpeg","url":"https://x/b.jpg","filename":"b.jpg"},
			{"type":"binary","mimeType":"text/plain","data":"aGk="},
			{"type":"binary","mimeType":"text/plain","id":"upload-1"}
		]},
		{"id":"a1","role":"assistant","toolCalls":[{"id":"tc","type":"function","function":{"name":"search","arguments":"{\"q\":1}"},"encryptedValue":"e"}]},
		{"id":"a2","role":"assistant","content":null},
		{"id":"tm","role":"tool","toolCallId":"tc","content":"{\"ok\":true}","error":"partial"},
		{"id":"tp","role":"tool","toolCallId":"tc","content":[{"type":"text","text":"x"}]},
		{"id":"act","role":"activity","activityType":"PLAN","content":{"steps":[]}},
		{"id":"rs","role":"reasoning","content":"thinking","encryptedValue":"enc","subagentRunId":"sa"}
	]}`
	got, err := DecodeRunAgentInput([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []Message{
		{ID: "d", Role: RoleDeveloper, Content: TextContent("be brief")},
		{ID: "s", Role: RoleSystem, Content: TextContent("sys"), Name: "policy"},
		{ID: "u1", Role: RoleUser, Content: TextContent("hello"), Metadata: map[string]any{"k": nil}},
		{ID: "u2", Role: RoleUser, Content: &Content{Kind: ContentParts, Parts: []ContentPart{
			{Type: PartText, Text: "look"},
			{Type: PartImage, Source: &Source{Type: SourceData, Value: "iVBORw0=", MimeType: "image/png"}, Metadata: map[string]any{"filename": "a.png"}},
			{Type: PartAudio, Source: &Source{Type: SourceURL, Value: "https://x/a.mp3"}},
			{Type: PartVideo, Source: &Source{Type: SourceURL, Value: "https://x/v.mp4", MimeType: "video/mp4"}, ID: "p1"},
			{Type: PartDocument, Source: &Source{Type: SourceFile, Value: "file-abc", Provider: "openai", MimeType: "application/pdf"}},
			{Type: PartBinary, MimeType: "image/jpeg", URL: "https://x/b.jpg", Filename: "b.jpg"},
			{Type: PartBinary, MimeType: "text/plain", Data: "aGk="},
			{Type: PartBinary, MimeType: "text/plain", ID: "upload-1"},
		}}},
		{ID: "a1", Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "tc", Type: "function", Function: FunctionCall{Name: "search", Arguments: `{"q":1}`}, EncryptedValue: "e"}}},
		{ID: "a2", Role: RoleAssistant},
		{ID: "tm", Role: RoleTool, ToolCallID: "tc", Content: TextContent(`{"ok":true}`), Error: "partial"},
		{ID: "tp", Role: RoleTool, ToolCallID: "tc", Content: &Content{Kind: ContentParts, Parts: []ContentPart{{Type: PartText, Text: "x"}}}},
		{ID: "act", Role: RoleActivity, ActivityType: "PLAN", Content: &Content{Kind: ContentObject, Object: json.RawMessage(`{"steps":[]}`)}},
		{ID: "rs", Role: RoleReasoning, Content: TextContent("thinking"), EncryptedValue: "enc", SubagentRunID: "sa"},
	}
	if diff := cmp.Diff(want, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestDecodeRunAgentInputErrors(t *testing.T) {
	t.Parallel()
	msg := func(m string) string { return `{"threadId":"t","runId":"r","messages":[` + m + `]}` }
	part := func(p string) string {
		return msg(`{"id":"u","role":"user","content":[{"type":"text","text":"x"},` + p + `]}`)
	}
	cases := []struct {
		name, body, field string
	}{
		{"invalid UTF-8", "{\"threadId\":\"t\xff\",\"runId\":\"r\"}", ""},
		{"not an object", `[{"threadId":"t"}]`, ""},
		{"not JSON", `{"threadId":`, ""},
		{"empty body", ``, ""},
		{"missing threadId", `{"runId":"r"}`, "threadId"},
		{"empty runId", `{"threadId":"t","runId":""}`, "runId"},
		{"null threadId", `{"threadId":null,"runId":"r"}`, "threadId"},
		{"numeric runId", `{"threadId":"t","runId":7}`, "runId"},
		{"threadId too long", `{"threadId":"` + strings.Repeat("x", 257) + `","runId":"r"}`, "threadId"},
		{"control character in runId", `{"threadId":"t","runId":"r\n1"}`, "runId"},
		{"messages not an array", `{"threadId":"t","runId":"r","messages":{}}`, "messages"},
		{"tools not an array", `{"threadId":"t","runId":"r","tools":"x"}`, "tools"},
		{"tool without name", `{"threadId":"t","runId":"r","tools":[{"description":"d"}]}`, "tools[0].name"},
		{"context value not a string", `{"threadId":"t","runId":"r","context":[{"description":"d","value":1}]}`, "context[0].value"},
		{"protocolVersion not a string", `{"threadId":"t","runId":"r","protocolVersion":1}`, "protocolVersion"},
		{"message not an object", msg(`"hi"`), "messages[0]"},
		{"message without id", msg(`{"role":"user","content":"x"}`), "messages[0].id"},
		{"message without role", msg(`{"id":"m","content":"x"}`), "messages[0].role"},
		{"unknown role", msg(`{"id":"m","role":"robot","content":"x"}`), "messages[0].role"},
		{"tool message without toolCallId", msg(`{"id":"m","role":"tool","content":"x"}`), "messages[0].toolCallId"},
		{"system content parts", msg(`{"id":"m","role":"system","content":[{"type":"text","text":"x"}]}`), "messages[0].content"},
		{"user content number", msg(`{"id":"m","role":"user","content":3}`), "messages[0].content"},
		{"user content object", msg(`{"id":"m","role":"user","content":{}}`), "messages[0].content"},
		{"activity content string", msg(`{"id":"m","role":"activity","activityType":"T","content":"x"}`), "messages[0].content"},
		{"metadata not an object", msg(`{"id":"m","role":"user","content":"x","metadata":[]}`), "messages[0].metadata"},
		{"name not a string", msg(`{"id":"m","role":"user","content":"x","name":5}`), "messages[0].name"},
		{"tool call without function", msg(`{"id":"m","role":"assistant","toolCalls":[{"id":"tc","type":"function"}]}`), "messages[0].toolCalls[0].function"},
		{"tool call function name", msg(`{"id":"m","role":"assistant","toolCalls":[{"id":"tc","type":"function","function":{"arguments":"{}"}}]}`), "messages[0].toolCalls[0].function.name"},
		{"unknown part type", part(`{"type":"hologram"}`), "messages[0].content[1].type"},
		{"part not an object", part(`"x"`), "messages[0].content[1]"},
		{"part without type", part(`{"text":"x"}`), "messages[0].content[1].type"},
		{"text part text not a string", part(`{"type":"text","text":1}`), "messages[0].content[1].text"},
		{"image without source", part(`{"type":"image"}`), "messages[0].content[1].source"},
		{"source not an object", part(`{"type":"image","source":"x"}`), "messages[0].content[1].source"},
		{"unknown source type", part(`{"type":"image","source":{"type":"s3","value":"x"}}`), "messages[0].content[1].source.type"},
		{"data source without value", part(`{"type":"image","source":{"type":"data","mimeType":"image/png"}}`), "messages[0].content[1].source.value"},
		{"data source without mimeType", part(`{"type":"audio","source":{"type":"data","value":"AAAA"}}`), "messages[0].content[1].source.mimeType"},
		{"url source without value", part(`{"type":"video","source":{"type":"url"}}`), "messages[0].content[1].source.value"},
		{"file source without value", part(`{"type":"document","source":{"type":"file","provider":"openai"}}`), "messages[0].content[1].source.value"},
		{"binary without mimeType", part(`{"type":"binary","data":"AAAA"}`), "messages[0].content[1].mimeType"},
		{"binary without id, url or data", part(`{"type":"binary","mimeType":"image/png"}`), "messages[0].content[1]"},
		{"resume without interruptId", `{"threadId":"t","runId":"r","resume":[{"status":"resolved"}]}`, "resume[0].interruptId"},
		{"resume with bad status", `{"threadId":"t","runId":"r","resume":[{"interruptId":"i","status":"approved"}]}`, "resume[0].status"},
		{"resume not an array", `{"threadId":"t","runId":"r","resume":{}}`, "resume"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, err := DecodeRunAgentInput([]byte(tc.body))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("DecodeRunAgentInput = %+v, %v; want an *InputError", in, err)
			}
			if ie.Field != tc.field {
				t.Errorf("Field = %q, want %q (message %q)", ie.Field, tc.field, ie.Message)
			}
			if ie.Message == "" || !strings.HasPrefix(ie.Error(), "agui: bad RunAgentInput: ") {
				t.Errorf("unhelpful error %q", ie.Error())
			}
		})
	}
}

// FuzzDecodeRunAgentInput: never panics, and a body it accepts re-encodes
// to one it accepts again, with the same meaning.
func FuzzDecodeRunAgentInput(f *testing.F) {
	for _, b := range []string{body1_0, body0_59,
		`{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"image","source":{"type":"data","value":"AA==","mimeType":"image/png"}},{"type":"binary","mimeType":"a/b","id":"x"}]}],"resume":[{"interruptId":"i","status":"cancelled"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"tc","type":"function","function":{"name":"f","arguments":""}}]},{"id":"x","role":"activity","activityType":"T","content":{}}]}`,
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := DecodeRunAgentInput(body)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %T is not an *InputError", err)
			}
			return
		}
		out, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeRunAgentInput(out)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		if again.ThreadID != in.ThreadID || again.RunID != in.RunID || len(again.Messages) != len(in.Messages) ||
			len(again.Resume) != len(in.Resume) || again.IsV1() != in.IsV1() {
			t.Fatalf("meaning changed on re-decode:\n%+v\n%+v", in, again)
		}
	})
}

func BenchmarkDecodeRunAgentInput(b *testing.B) {
	body := []byte(`{"threadId":"th-1","runId":"run-3","protocolVersion":"1.0","state":{"a2a":{"taskId":"x"}},"messages":[{"id":"u1","role":"user","content":"Book me a flight to Lisbon"},{"id":"a1","role":"assistant","content":"Which date?"},{"id":"u2","role":"user","content":[{"type":"text","text":"Friday"},{"type":"image","source":{"type":"url","value":"https://x/y.png"}}]}],"tools":[],"context":[],"forwardedProps":{}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRunAgentInput(body); err != nil {
			b.Fatal(err)
		}
	}
}
