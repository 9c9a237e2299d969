package aguihttp

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestParseFrame(t *testing.T) {
	t.Parallel()
	good := []string{
		`{"type":"run","input":{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"hi"}]}}`,
		`{"type":"cancel","threadId":"t"}`,
		`{"type":"subscribe","threadId":"t","after":0}`,
		`{"type":"subscribe","threadId":"t","after":12}`,
	}
	for _, g := range good {
		if f, bad := parseFrame([]byte(g)); bad != nil || f == nil {
			t.Errorf("%s refused: %+v", g, bad)
		}
	}
	bad := map[string]string{
		`nope`:           "",
		`{"type":"run"}`: "",
		`{"type":"run","input":{"threadId":"t","runId":"r","messages":7}}`: "t",
		`{"type":"cancel"}`: "",
		`{"type":"subscribe","threadId":"t","after":-1}`: "t",
		`{"type":"dance","threadId":"t"}`:                "t",
		`[]`:                                             "",
	}
	for frame, thread := range bad {
		f, b := parseFrame([]byte(frame))
		if f != nil || b == nil || b.message == "" || b.threadID != thread {
			t.Errorf("%s: %+v %+v", frame, f, b)
		}
	}
}

// FuzzParseFrame: any bytes a client sends on the socket are either one
// well-formed frame or a refusal with a message the error envelope can
// carry; never a panic.
func FuzzParseFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"run","input":{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"hi"}],"resume":[{"interruptId":"i","status":"resolved","payload":{"a":1}}]}}`,
		`{"type":"cancel","threadId":"t"}`,
		`{"type":"subscribe","threadId":"t","after":3}`,
		`{"type":"run","input":null}`,
		`{"type":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, bad := parseFrame(data)
		if (p == nil) == (bad == nil) {
			t.Fatalf("want exactly one of a frame and a refusal: %+v %+v", p, bad)
		}
		if bad != nil {
			if bad.message == "" || !utf8.ValidString(bad.message) {
				t.Fatalf("refusal without a readable message: %q", bad.message)
			}
			if _, err := json.Marshal(bad.message); err != nil {
				t.Fatal(err)
			}
			if len(bad.threadID) > maxFrameID || len(bad.runID) > maxFrameID {
				t.Fatalf("a refusal echoes an id of %d/%d bytes", len(bad.threadID), len(bad.runID))
			}
			return
		}
		switch p.Type {
		case frameRun:
			if p.input == nil || p.input.ThreadID == "" || p.input.RunID == "" {
				t.Fatalf("a run frame without a decoded input: %+v", p)
			}
		case frameCancel, frameSubscribe:
			if p.ThreadID == "" || len(p.ThreadID) > maxFrameID || p.After < 0 {
				t.Fatalf("%s frame accepted without its fields: %+v", p.Type, p)
			}
		default:
			t.Fatalf("unknown frame type accepted: %q", p.Type)
		}
	})
}
