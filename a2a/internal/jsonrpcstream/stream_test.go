package jsonrpcstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// rpcPayload wraps an event the way an a2asrv JSON-RPC server writes it.
func rpcPayload(t testing.TB, ev a2asdk.Event) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "req-1", "result": a2asdk.StreamResponse{Event: ev}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func samplePayloads(t testing.TB) [][]byte {
	ts := time.Date(2026, 12, 3, 9, 0, 0, 123456789, time.UTC)
	task := a2asdk.TaskInfo{TaskID: "task-1", ContextID: "ctx-1"}
	chunk := a2asdk.NewArtifactUpdateEvent(task, "art-1", a2asdk.NewTextPart("Hello, wörld \"quoted\" \n\t\u2028 😀"))
	chunk.LastChunk = true
	first := a2asdk.NewArtifactEvent(task, a2asdk.NewTextPart("first"), a2asdk.NewDataPart(map[string]any{"n": 1.5, "list": []any{"a", nil, true}}))
	first.Artifact.Name, first.Artifact.Description = "answer", "the answer"
	first.Artifact.Metadata = map[string]any{"k": "v"}
	first.Artifact.Extensions = []string{"urn:x"}
	first.Metadata = map[string]any{"trace": map[string]any{"id": 7.0}}
	withFile := a2asdk.NewArtifactEvent(task, &a2asdk.Part{Content: a2asdk.Text("x"), Filename: "a.txt", MediaType: "text/plain", Metadata: map[string]any{"m": "n"}})
	working := &a2asdk.TaskStatusUpdateEvent{TaskID: "task-1", ContextID: "ctx-1", Status: a2asdk.TaskStatus{State: a2asdk.TaskStateWorking, Timestamp: &ts}}
	msg := a2asdk.NewMessageForTask(a2asdk.MessageRoleAgent, task, a2asdk.NewTextPart("thinking…"))
	msg.Metadata = map[string]any{"a": "b"}
	msg.Extensions = []string{"urn:e"}
	msg.ReferenceTasks = []a2asdk.TaskID{"t0"}
	withMsg := &a2asdk.TaskStatusUpdateEvent{TaskID: "task-1", ContextID: "ctx-1", Status: a2asdk.TaskStatus{State: a2asdk.TaskStateInputRequired, Message: msg}}
	out := [][]byte{}
	for _, ev := range []a2asdk.Event{chunk, first, withFile, working, withMsg} {
		out = append(out, rpcPayload(t, ev))
	}
	return out
}

// sameAsSDK checks that the fast decoder, when it accepts a payload,
// decodes it exactly as the SDK does.
func sameAsSDK(t testing.TB, payload []byte) (fast bool) {
	got, ok := decodeStreamEvent(payload)
	if !ok {
		return false
	}
	want, err := sdkDecode(payload)
	if err != nil {
		t.Fatalf("fast decoder accepted what the SDK refuses (%v): %q", err, payload)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast decoder differs from the SDK on %q:\n got %#v\nwant %#v", payload, got, want)
	}
	return true
}

func TestStreamDecodeMatchesSDK(t *testing.T) {
	for i, p := range samplePayloads(t) {
		if !sameAsSDK(t, p) {
			t.Errorf("sample %d took the slow path: %s", i, p)
		}
	}
	// Shapes the fast path declines; the SDK decides (result or error).
	declined := []string{
		`{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"task not found"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t"}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t"}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t"},"artifactUpdate":{"taskId":"t"}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t","TaskId":"u"}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t","taskId":"u"}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"artifactUpdate":{"artifact":{"parts":[{"raw":"aGk="}]}}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"artifactUpdate":{"artifact":{"parts":[{"text":"a","data":1}]}}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"artifactUpdate":{"artifact":null}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"artifactUpdate":{"t\u0061skId":"x"}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{}}} x`,
		``,
	}
	for _, p := range declined {
		if _, ok := decodeStreamEvent([]byte(p)); ok {
			t.Errorf("fast path accepted %s", p)
		}
		sameAsSDK(t, []byte(p))
	}
	// Escapes and unknown keys are fine: decoded, and equal to the SDK.
	accepted := []string{
		`{"jsonrpc":"2.0","id":"1","extra":[1,{"a":null}],"result":{"artifactUpdate":{"kind":"artifact-update","taskId":"t","contextId":"c","append":true,"artifact":{"artifactId":"a","parts":[{"text":"tab\there \u00e9 \ud83d\ude00","kind":"text"}]}}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t","contextId":"c","final":false,"status":{"state":"TASK_STATE_UNSPECIFIED","message":{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[]}}}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"lone \ud800 surrogate"}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"artifactUpdate\":{\"artifact\":{\"artifactId\":\"a\",\"parts\":[{\"text\":\"bad \xff utf8\"}]}}}}",
	}
	for _, p := range accepted {
		if !sameAsSDK(t, []byte(p)) {
			t.Errorf("fast path declined %s", p)
		}
	}
}

func FuzzStreamDecode(f *testing.F) {
	for _, p := range samplePayloads(f) {
		f.Add(p)
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-02T03:04:05Z"}}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"1","result":{"artifactUpdate":{"artifact":{"parts":[{"data":[1e5,-0.5,"x"]}]}}}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		sameAsSDK(t, payload)
	})
}

// bodyTransport answers every request with the same body.
type bodyTransport string

func (b bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	_ = req.Body.Close()
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(strings.NewReader(string(b))), Request: req}, nil
}

var keyList = regexp.MustCompile(`\[[^\]]*\]$`)

// streamOutcome is what a transport yields for one body, printed.
func streamOutcome(t testing.TB, tr a2aclient.Transport) string {
	var out strings.Builder
	for ev, err := range tr.SendStreamingMessage(context.Background(), nil, &a2asdk.SendMessageRequest{Message: a2asdk.NewMessage(a2asdk.MessageRoleUser)}) {
		if err != nil {
			// The SDK lists unknown keys in map order: compare without them.
			fmt.Fprintf(&out, "error %s\n", keyList.ReplaceAllString(err.Error(), "[…]"))
			continue
		}
		b, jerr := json.Marshal(a2asdk.StreamResponse{Event: ev})
		if jerr != nil {
			t.Fatal(jerr)
		}
		fmt.Fprintf(&out, "event %T %s\n", ev, b)
	}
	return out.String()
}

// checkSameStream runs an SSE body through the SDK's transport and ours.
func checkSameStream(t testing.TB, body string) {
	client := &http.Client{Transport: bodyTransport(body)}
	want := streamOutcome(t, a2aclient.NewJSONRPCTransport("http://agent.invalid/", client))
	got := streamOutcome(t, newStreamingJSONRPC("http://agent.invalid/", client))
	if got != want {
		t.Fatalf("stream %q:\n ours %s\n  sdk %s", body, got, want)
	}
}

func TestStreamingJSONRPCMatchesSDK(t *testing.T) {
	payloads := samplePayloads(t)
	var frames strings.Builder
	for _, p := range payloads {
		frames.WriteString("id: x\nevent: message\ndata: ")
		frames.Write(p)
		frames.WriteString("\r\n\r\n: comment\n\n")
	}
	long := rpcPayload(t, a2asdk.NewArtifactEvent(a2asdk.TaskInfo{TaskID: "t", ContextID: "c"}, a2asdk.NewTextPart(strings.Repeat("long ", 5000))))
	for _, body := range []string{
		frames.String(),
		"data:" + string(payloads[0]) + "\ndata: " + string(payloads[3]), // no final newline
		"data: " + string(long) + "\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"error\":{\"code\":-32001,\"message\":\"no such task\"}}\n\n",
		"data: not json\n\n",
		"data:\n\n",
		"",
		"data: " + strings.Repeat("x", maxSSELine+10) + "\n",
		// One event over several data lines is joined with "\n" (a2a-go
		// v2.4.0, #371): pretty-printed JSON decodes, two payloads in one
		// event do not, an empty data line adds nothing at the start.
		"data: {\"jsonrpc\": \"2.0\",\ndata:  \"id\": \"1\",\r\ndata: \"result\": {\"statusUpdate\": {\"taskId\": \"t\"}}}\n\n",
		"data:" + string(payloads[0]) + "\ndata: " + string(payloads[3]) + "\n\n",
		"data:\ndata: " + string(payloads[1]) + "\ndata:\n\n",
		"data: x\r\r\ndata: y\n\n",
	} {
		checkSameStream(t, body)
	}
}

func FuzzStreamingJSONRPC(f *testing.F) {
	for _, p := range samplePayloads(f) {
		f.Add("data: " + string(p) + "\n\n")
	}
	f.Add("data:x\r\ndata: {}\n")
	f.Add("data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":\"1\",\"result\":{\"task\":{\"id\":\"t\"}}}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		checkSameStream(t, body)
	})
}

func BenchmarkStreamDecode(b *testing.B) {
	p := rpcPayload(b, a2asdk.NewArtifactUpdateEvent(a2asdk.TaskInfo{TaskID: "9f1c2f6e-4a43-4a37-9a57-3f1f1b0c8d11", ContextID: "0b7f3f7e-2b4b-4d7c-8f43-5d1c9f6b2a10"}, "b7f7d8e2-6f1e-4e1b-9c1a-2e7c4a1b9d33", a2asdk.NewTextPart("token 42 ")))
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeStreamEvent(p); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sdkDecode(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStreamRead reads a whole stream of 100 artifact chunks, SSE
// framing included, through our transport and through the SDK's, so the
// reader is kept only while it wins against the SDK version in go.mod.
func BenchmarkStreamRead(b *testing.B) {
	task := a2asdk.TaskInfo{TaskID: "9f1c2f6e-4a43-4a37-9a57-3f1f1b0c8d11", ContextID: "0b7f3f7e-2b4b-4d7c-8f43-5d1c9f6b2a10"}
	var body strings.Builder
	for range 100 {
		ev := a2asdk.NewArtifactUpdateEvent(task, "b7f7d8e2-6f1e-4e1b-9c1a-2e7c4a1b9d33", a2asdk.NewTextPart("token 42 "))
		ev.Append = true
		body.WriteString("id: 1b2f\ndata: ")
		body.Write(rpcPayload(b, ev))
		body.WriteString("\n\n")
	}
	client := &http.Client{Transport: bodyTransport(body.String())}
	for _, tc := range []struct {
		name string
		tr   a2aclient.Transport
	}{
		{"ours", newStreamingJSONRPC("http://agent.invalid/", client)},
		{"sdk", a2aclient.NewJSONRPCTransport("http://agent.invalid/", client)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			req := &a2asdk.SendMessageRequest{Message: a2asdk.NewMessage(a2asdk.MessageRoleUser)}
			for b.Loop() {
				n := 0
				for _, err := range tc.tr.SendStreamingMessage(b.Context(), nil, req) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 100 {
					b.Fatalf("%d events", n)
				}
			}
		})
	}
}
