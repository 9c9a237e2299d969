package aguihttp

import (
	"context"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// slowStream yields its events with a pause, long enough for keep-alives,
// numbered from 1 as a journal would.
type slowStream struct {
	events [][]byte
	pause  time.Duration
}

func (s slowStream) Events(ctx context.Context) iter.Seq2[agui.Envelope, error] {
	return func(yield func(agui.Envelope, error) bool) {
		for i, e := range s.events {
			select {
			case <-ctx.Done():
				yield(agui.Envelope{}, ctx.Err())
				return
			case <-time.After(s.pause):
			}
			if !yield(agui.Envelope{ThreadID: "t", RunID: "r", Seq: int64(i + 1), Event: e}, nil) {
				return
			}
		}
	}
}

type oneAgent struct{}

func (oneAgent) Has(name string) bool { return name == "a" }
func (oneAgent) Agents(context.Context) []AgentInfo {
	return []AgentInfo{{Name: "a"}}
}
func (oneAgent) Agent(_ context.Context, name string) (AgentInfo, bool) {
	return AgentInfo{Name: name}, name == "a"
}
func (oneAgent) Ready(context.Context) Readiness { return Readiness{Store: Health{Status: HealthOK}} }

func newTestHandler(t *testing.T) *Handler {
	t.Helper()
	run := RunnerFunc(func(context.Context, string, *agui.RunAgentInput) (Stream, error) {
		return slowStream{pause: 30 * time.Millisecond, events: [][]byte{
			[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
			[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
		}}, nil
	})
	return New(Options{Runner: run, Catalog: oneAgent{}, KeepAlive: 10 * time.Millisecond,
		CORSOrigins: []string{"https://app.example.com"}})
}

func TestSSEFramesAndKeepAlive(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newTestHandler(t))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/agents/a", "application/json", strings.NewReader(`{"threadId":"t","runId":"r","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	got := string(body)
	for _, h := range []string{"Content-Type", "Cache-Control", "X-Accel-Buffering"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("missing header %s", h)
		}
	}
	if !strings.Contains(got, ": keep-alive\n\n") || !strings.HasSuffix(got, "id: 2\ndata: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n") ||
		strings.Contains(got, "\r") {
		t.Fatalf("stream %q", got)
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t)
	req := httptest.NewRequest(http.MethodOptions, "/agents/a", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	req = httptest.NewRequest(http.MethodOptions, "/agents/a", nil)
	req.Header.Set("Origin", "https://evil.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("an unlisted origin was allowed")
	}
}

func TestErrorsAreJSON(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t)
	for _, c := range []struct {
		method, path, ctype, body string
		status                    int
	}{
		{"POST", "/agents/nobody", "application/json", `{}`, 404},
		{"POST", "/agents/a", "text/plain", `{}`, 415},
		{"POST", "/agents/a", "application/json", `{"runId":"r"}`, 400},
		{"GET", "/nowhere", "", "", 404},
	} {
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status || !strings.HasPrefix(rec.Body.String(), `{"error":{"code":`) {
			t.Errorf("%s %s: %d %s", c.method, c.path, rec.Code, rec.Body)
		}
	}
}
