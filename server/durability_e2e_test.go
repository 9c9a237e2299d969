package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/store/boltstore"
)

// syncWatch is an embedded store that remembers, for each journal entry,
// that the synced commit holding it returned. The disk is made slow (each
// write waits syncWatchDelay before it starts), so that a bridge showing
// an event before its commit returned would show it for that long while
// the watch says it is not on disk yet: readers check every event they are
// shown against the watch.
type syncWatch struct {
	tasks.Store
	mu     sync.Mutex
	synced map[string]map[int64]bool // thread id → seq → its commit returned
}

const syncWatchDelay = 20 * time.Millisecond

func (w *syncWatch) record(key tasks.ThreadKey, entries []tasks.Entry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.synced[key.ThreadID]
	if m == nil {
		m = map[int64]bool{}
		w.synced[key.ThreadID] = m
	}
	for _, e := range entries {
		m[e.Seq] = true
	}
}

func (w *syncWatch) isSynced(thread string, seq int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.synced[thread][seq]
}

func (w *syncWatch) Append(ctx context.Context, key tasks.ThreadKey, entries ...tasks.Entry) error {
	time.Sleep(syncWatchDelay)
	err := w.Store.Append(ctx, key, entries...)
	if err == nil {
		w.record(key, entries)
	}
	return err
}

func (w *syncWatch) PutThreadAndAppend(ctx context.Context, th *tasks.Thread, entries ...tasks.Entry) (int64, error) {
	if len(entries) > 0 {
		time.Sleep(syncWatchDelay)
	}
	v, err := w.Store.PutThreadAndAppend(ctx, th, entries...)
	if err == nil {
		w.record(th.Key, entries)
	}
	return v, err
}

// Read and Wait make an entry visible only once the watch recorded it. The
// embedded store shows an entry to its readers (and wakes its Waits) as its
// commit returns, a moment before Append returns to the wrapper, which
// records it: without this, a long poll woken in that moment would be
// taken for a reader shown an event that was not on disk.
func (w *syncWatch) Read(ctx context.Context, key tasks.ThreadKey, after int64, limit int) ([]tasks.Entry, error) {
	entries, err := w.Store.Read(ctx, key, after, limit)
	for i, e := range entries {
		if !w.isSynced(key.ThreadID, e.Seq) {
			return entries[:i], err
		}
	}
	return entries, err
}

func (w *syncWatch) Wait(ctx context.Context, key tasks.ThreadKey, after int64) error {
	for {
		if err := w.Store.Wait(ctx, key, after); err != nil {
			return err
		}
		if w.isSynced(key.ThreadID, after+1) {
			return nil
		}
		select { // committed; Append is about to return and record it
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// shown checks, as a reader is shown an event, that its commit returned.
func (w *syncWatch) shown(t *testing.T, reader, thread string, seq int64) {
	if seq <= 0 {
		t.Errorf("%s: event of %s without a sequence number", reader, thread)
		return
	}
	if !w.isSynced(thread, seq) {
		t.Errorf("%s: shown event %d of %s before the commit holding it returned", reader, seq, thread)
	}
}

// startWatchedBridge is a bridge on an embedded store behind a syncWatch.
func startWatchedBridge(t *testing.T) (*testBridge, *syncWatch) {
	t.Helper()
	demo, err := agents.Start(t.Context(), "127.0.0.1:0", agents.Options{Delay: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { demo.Close() })
	cfg := config.Default()
	path := filepath.Join(t.TempDir(), "bridge.db")
	cfg.Store = config.Store{Kind: config.StoreEmbedded, Path: path}
	cfg.Agents = []config.Agent{{Name: "narrator", URL: demo.URL("narrator")}}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	bolt, err := boltstore.OpenBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &syncWatch{Store: bolt, synced: map[string]map[int64]bool{}}
	metrics := observe.NewMetrics()
	b := build(cfg, store.Observe(w, config.StoreEmbedded, metrics), slog.New(slog.DiscardHandler),
		instruments{metrics: metrics})
	srv := httptest.NewServer(b.public)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.svc.Close(ctx)
		b.handler.Shutdown(ctx)
		srv.Close()
		b.closeAgents()
		bolt.Close()
	})
	return &testBridge{url: srv.URL, demo: demo, svc: b.svc, metrics: metrics}, w
}

// readSSE reads an SSE response to its end, checking every event as it
// arrives; first (if not nil) is called after the first event. It returns
// the sequence numbers shown.
func readSSE(t *testing.T, w *syncWatch, reader, thread string, body io.Reader, first func()) []int64 {
	var shown []int64
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	var seq int64
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "id: "); ok {
			seq, _ = strconv.ParseInt(v, 10, 64)
			continue
		}
		if _, ok := strings.CutPrefix(line, "data: "); ok {
			w.shown(t, reader, thread, seq)
			shown = append(shown, seq)
			seq = 0
			if len(shown) == 1 && first != nil {
				first()
			}
		}
	}
	return shown
}

func request(t *testing.T, method, url string, body string, header http.Header) *http.Response {
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
		return nil
	}
	return resp
}

// pollShown long-polls thread's journal from the start until the thread
// is at rest, checking every page as it arrives.
func pollShown(t *testing.T, b *testBridge, w *syncWatch, thread string) []int64 {
	var shown []int64
	var after int64
	for range 200 {
		resp := request(t, http.MethodGet, fmt.Sprintf("%s/agents/narrator/threads/%s/events?after=%d&wait=2", b.url, thread, after),
			"", http.Header{"Accept": {"application/json"}})
		if resp == nil {
			return shown
		}
		var page struct {
			Events []struct {
				Seq int64 `json:"seq"`
			} `json:"events"`
			Done bool `json:"done"`
		}
		err := json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Errorf("long poll: %v", err)
			return shown
		}
		for _, e := range page.Events {
			w.shown(t, "long poll", thread, e.Seq)
			shown = append(shown, e.Seq)
			after = e.Seq
		}
		if page.Done {
			return shown
		}
	}
	t.Errorf("long poll of %s never reached a thread at rest", thread)
	return shown
}

// TestShownOnlyWhenSynced: no client — the run's own SSE stream, a
// WebSocket, a second tab following the thread (replay, then live) and a
// long poll — is shown an event before the synced commit holding it
// returned, so a power loss takes back nothing a client saw. The restart
// tests (restart_test.go) show the other half: what was synced survives a
// SIGKILL. Fails if the journal writer hands a batch to the run's live log
// before the store took it.
func TestShownOnlyWhenSynced(t *testing.T) {
	t.Parallel()
	b, w := startWatchedBridge(t)
	var wg sync.WaitGroup
	for i := range 3 {
		thread := fmt.Sprint("sse-", i)
		wg.Go(func() {
			var readers sync.WaitGroup
			var follow, poll []int64
			started := func() {
				readers.Go(func() {
					resp := request(t, http.MethodGet, b.url+"/agents/narrator/threads/"+thread+"/events", "",
						http.Header{"Accept": {"text/event-stream"}, "Last-Event-ID": {"1"}})
					if resp != nil {
						defer resp.Body.Close()
						follow = readSSE(t, w, "second tab", thread, resp.Body, nil)
					}
				})
				readers.Go(func() { poll = pollShown(t, b, w, thread) })
			}
			resp := request(t, http.MethodPost, b.url+"/agents/narrator",
				string(runBody(thread, "run-1", true, userMsg("u1", "Tell me"))),
				http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}})
			if resp == nil {
				return
			}
			defer resp.Body.Close()
			run := readSSE(t, w, "run stream", thread, resp.Body, started)
			readers.Wait()
			if len(run) < 5 || len(follow) == 0 || len(poll) != len(run) {
				t.Errorf("%s: the run showed %d events, the second tab %d (after the first), the long poll %d",
					thread, len(run), len(follow), len(poll))
			}
		})
	}
	// The WebSocket client on the test's goroutine: its helpers may fail
	// the test at once.
	func() {
		thread := "ws-0"
		c := b.mustDialWS(t, "narrator")
		c.run(t, runBody(thread, "run-1", true, userMsg("u1", "Tell me")))
		for n := 0; ; n++ {
			env := c.next(t)
			w.shown(t, "websocket", env.ThreadID, env.Seq)
			if agui.IsTerminalEvent(env.Event) {
				if n < 5 {
					t.Errorf("websocket: %d events", n+1)
				}
				return
			}
		}
	}()
	wg.Wait()
}
