package aguihttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// waitThreads records the wait each long poll asks the thread service for.
type waitThreads struct {
	noThreads
	mu    sync.Mutex
	waits []time.Duration
}

func (w *waitThreads) Poll(_ context.Context, _, _ string, after int64, wait time.Duration) (*Poll, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits = append(w.waits, wait)
	return &Poll{Next: after}, nil
}

// Issue 33 item 8: ?wait=1e10 overflowed into a negative wait (the poll
// answered at once), and Inf was taken. Large waits are capped before the
// conversion; NaN and infinities are refused.
func TestLongPollWait(t *testing.T) {
	t.Parallel()
	threads := &waitThreads{}
	srv := httptest.NewServer(New(Options{Runner: RunnerFunc(nil), Catalog: oneAgent{}, Threads: threads}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		wait   string
		status int
		want   time.Duration
	}{
		{"1.5", http.StatusOK, 1500 * time.Millisecond},
		{"1e10", http.StatusOK, maxPollWait},
		{"1e300", http.StatusOK, maxPollWait},
		{"Inf", http.StatusBadRequest, 0},
		{"+Inf", http.StatusBadRequest, 0},
		{"NaN", http.StatusBadRequest, 0},
		{"-1", http.StatusBadRequest, 0},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/agents/a/threads/t1/events?wait="+tc.wait, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		threads.mu.Lock()
		var got time.Duration
		if n := len(threads.waits); n > 0 {
			got = threads.waits[n-1]
			threads.waits = threads.waits[:0]
		}
		threads.mu.Unlock()
		if resp.StatusCode != tc.status || got != tc.want {
			t.Errorf("wait=%s: %d, poll waited %v; want %d, %v", tc.wait, resp.StatusCode, got, tc.status, tc.want)
		}
	}
}
