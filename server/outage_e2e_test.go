package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/internal/redistest"
	"github.com/a2a-agui-bridge/bridge/internal/smallfs"
)

// The store-outage tests (issue 20): real outages under real bridge
// processes — the embedded store's filesystem filled to ENOSPC (a small
// tmpfs the test mounts), a real redis-server SIGKILLed and restarted on
// the same port, with its append-only file, under three instances — and
// what a client was shown checked against the journal afterwards.

// waitReadyz polls url's /readyz until it answers want, for at most
// within.
func waitReadyz(t *testing.T, url string, want int, within time.Duration) {
	t.Helper()
	if err := readyzWithin(t.Context(), url, want, within); err != nil {
		t.Fatal(err)
	}
}

// waitAllReadyz is waitReadyz on every instance of c at once, so that
// instances waiting out a hung store's ping do not add up.
func waitAllReadyz(t *testing.T, c *cluster, want int, within time.Duration) {
	t.Helper()
	errs := make([]error, len(c.addrs))
	var wg sync.WaitGroup
	for i := range c.addrs {
		wg.Go(func() { errs[i] = readyzWithin(t.Context(), c.bridge(i).url, want, within) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func readyzWithin(ctx context.Context, url string, want int, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	// Longer than /readyz's own bound on the store's answer (3s), which a
	// paused Redis makes it wait out.
	client := &http.Client{Timeout: 5 * time.Second}
	last := 0
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/readyz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			last = resp.StatusCode
			if last == want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/readyz answered %d, not %d, for %v", url, last, want, within)
		case <-time.After(pollInterval):
		}
	}
}

// framesUntil reads lr's frames up to and including the first whose data
// contains s.
func framesUntil(t *testing.T, lr *liveRun, s string) []sseFrame {
	t.Helper()
	var out []sseFrame
	timeout := time.After(30 * time.Second)
	for {
		select {
		case f, ok := <-lr.frames:
			if !ok {
				t.Fatalf("the stream ended before %q", s)
			}
			out = append(out, f)
			if strings.Contains(f.data, s) {
				return out
			}
		case <-timeout:
			t.Fatalf("no %q within 30s", s)
		}
	}
}

// wantEnded checks that a client's stream is one run ending exactly once,
// with RUN_FINISHED and the whole text want, or (want == "") with
// RUN_ERROR store_unavailable.
func wantEnded(t *testing.T, thread string, shown []sseFrame, want string) {
	t.Helper()
	events := decodeFrames(t, shown)
	ends := 0
	for _, e := range events {
		if isTerminal(e) {
			ends++
		}
	}
	r := runResult{events: events}
	if ends != 1 || !isTerminal(r.last()) {
		t.Fatalf("%s: the client's stream has %d terminal events and ends with %s", thread, ends, r.last().Type())
	}
	if want != "" {
		if r.last().Type() != agui.EventRunFinished || r.text() != want {
			t.Fatalf("%s: the run ends with %s, text %q; want RUN_FINISHED and %q", thread, r.last().Type(), r.text(), want)
		}
		return
	}
	e, ok := r.last().(*agui.RunError)
	if !ok || e.Code != agui.CodeStoreUnavailable {
		t.Fatalf("%s: the run ends with %s; want RUN_ERROR store_unavailable", thread, shown[len(shown)-1].data)
	}
}

// wantJournalIsShown checks that the journal holds exactly what the
// client was shown: every event once, at the same id, the same bytes —
// nothing shown was lost, nothing is in the journal that the client's
// stream did not have. With gapless the ids are 1, 2, …; a run that ended
// with store_unavailable gave events up (never shown; a refused write
// never stored them), and its end's id follows theirs.
func wantJournalIsShown(t *testing.T, thread string, journal, shown []sseFrame, gapless bool) {
	t.Helper()
	for i, f := range journal {
		if (gapless && f.seq != int64(i+1)) || (i > 0 && f.seq <= journal[i-1].seq) {
			t.Fatalf("%s: journal frame %d has id %d: lost or repeated events", thread, i, f.seq)
		}
	}
	if len(journal) != len(shown) {
		t.Fatalf("%s: the journal holds %d events, the client was shown %d", thread, len(journal), len(shown))
	}
	for i := range shown {
		if shown[i] != journal[i] {
			t.Fatalf("%s: event %d shown as %d %s, journaled as %d %s", thread, i, shown[i].seq, shown[i].data, journal[i].seq, journal[i].data)
		}
	}
}

// TestStoreOutageEmbeddedDiskFull: the embedded store's filesystem (a
// 16 MiB tmpfs) fills up mid-run. /readyz turns 503 once a write failed;
// a run whose disk gets space back within the outage budget (10s) goes on
// and finishes whole; one whose disk stays full ends with RUN_ERROR
// store_unavailable, and once space is freed /readyz is 200 again, the
// journal holds exactly what its client was shown (the end included) and
// the thread takes a new run, all without a restart.
func TestStoreOutageEmbeddedDiskFull(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	disk := t.TempDir()
	unmount, err := smallfs.Mount(disk, 16<<20)
	if errors.Is(err, smallfs.ErrCannotMount) {
		t.Skipf("SKIPPED: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unmount() }) // after the bridge is gone (cleanups run last first)
	demo := startDemoAgents(t, demoBin)
	dir := t.TempDir()
	addr := freePort(t)
	cfg := fmt.Sprintf("listen: %q\nstore: {kind: embedded, path: %q}\nagents:\n  - name: counter\n    url: %q\n",
		addr, filepath.Join(disk, "bridge.db"), demo["counter"])
	path := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	procs := &bridgeProcs{bin: bridgeBin, config: path, url: "http://" + addr}
	b := procs.start(t)
	want := agents.CounterText(agents.DefaultCounterCount)

	// outage fills the disk once the client was shown text and frees it
	// after back, or (back 0) once the run's stream ended.
	outage := func(thread string, back time.Duration) []sseFrame {
		lr := b.open(t, "counter", runBody(thread, "run-1", true, userMsg("u1", "count")))
		shown := framesUntil(t, lr, `"delta":"3 "`)
		filler, err := smallfs.Fill(disk, "filler")
		if err != nil {
			t.Fatal(err)
		}
		waitReadyz(t, b.url, http.StatusServiceUnavailable, 10*time.Second)
		if back > 0 {
			time.Sleep(back) // the outage itself, not a wait for a condition
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		}
		shown = append(shown, collectFramesWithin(t, lr, 60*time.Second)...)
		if back == 0 {
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		}
		waitReadyz(t, b.url, http.StatusOK, 10*time.Second)
		return shown
	}
	journal := func(thread string) []sseFrame {
		return collectFramesWithin(t, b.stream(t, http.MethodGet, "/agents/counter/threads/"+thread+"/events?after=0", nil,
			http.Header{"Accept": {"text/event-stream"}}), 30*time.Second)
	}

	t.Run("space back within the budget", func(t *testing.T) {
		// The run waits, shown nothing new, while the disk is full, and
		// goes on once the filler is removed.
		shown := outage("th-disk-back", 2*time.Second)
		wantEnded(t, "th-disk-back", shown, want)
		wantJournalIsShown(t, "th-disk-back", journal("th-disk-back"), shown, true)
	})

	t.Run("disk full past the budget", func(t *testing.T) {
		shown := outage("th-disk-full", 0)
		wantEnded(t, "th-disk-full", shown, "")
		// The run's end reaches the journal once there is space.
		waitJournalEnds(t, journal, "th-disk-full")
		wantJournalIsShown(t, "th-disk-full", journal("th-disk-full"), shown, false)
		r := b.post(t, "counter", runBody("th-disk-full", "run-2", true, userMsg("u1", "count")))
		if r.status != http.StatusOK || r.last().Type() != agui.EventRunFinished {
			t.Fatalf("a new run on the thread after the disk had space again: %d %s", r.status, r.body)
		}
	})
}

func isTerminal(e agui.Event) bool {
	return e.Type() == agui.EventRunFinished || e.Type() == agui.EventRunError
}

// waitJournalEnds waits until the thread's journal ends with a terminal
// event (a run failed during an outage journals its end once the store is
// back, within a second or so).
func waitJournalEnds(t *testing.T, journal func(string) []sseFrame, thread string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		// /events of a thread whose run is still active follows it: the
		// read returns once the run's end is journaled.
		fs := journal(thread)
		if len(fs) > 0 && isTerminal(decodeFrames(t, fs[len(fs)-1:])[0]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the journal never got the run's end", thread)
		}
		time.Sleep(pollInterval)
	}
}

// redisOutage runs counter runs on three instances sharing a real
// redis-server (append-only file, fsync always: nothing acknowledged is
// lost to a SIGKILL), kills Redis once every client was shown text, keeps
// it down for down, restarts it on the same port and returns what each
// client was shown, by thread, once the streams ended; every instance's
// /readyz was 503 during the outage and is 200 after. With pause, Redis is
// paused (SIGSTOP) and resumed instead: unreachable, not restarted.
func redisOutage(t *testing.T, runs int, down time.Duration, pause bool) (*cluster, map[string][]sseFrame) {
	t.Helper()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	r, err := redistest.Start(t.Context(), t.TempDir(), "--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Kill)
	// The default lease (15s): the outage budget is half of it.
	c := newClusterOn(t, bridgeBin, demo, 3, fmt.Sprintf("{kind: redis, url: %q}", "redis://"+r.Addr+"/0"), "counter")

	shown := make(map[string][]sseFrame)
	lrs := make(map[string]*liveRun)
	for i := range runs {
		th := fmt.Sprintf("th-outage-%d", i)
		lrs[th] = c.bridge(i%3).open(t, "counter", runBody(th, "run-1", true, userMsg("u1", "count")))
	}
	for th, lr := range lrs {
		shown[th] = framesUntil(t, lr, `"delta":"2 "`)
	}
	var mu sync.Mutex
	var rest sync.WaitGroup
	for th, lr := range lrs {
		rest.Go(func() {
			fs := collectFramesWithin(t, lr, 120*time.Second)
			mu.Lock()
			shown[th] = append(shown[th], fs...)
			mu.Unlock()
		})
	}

	if pause {
		t.Logf("kill -STOP redis-server; unreachable for %v", down)
		if err := r.Pause(); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Logf("kill -9 redis-server; down for %v", down)
		r.Kill()
	}
	began := time.Now()
	waitAllReadyz(t, c, http.StatusServiceUnavailable, 10*time.Second)
	// A run asked for meanwhile is refused before its stream starts. (Not
	// asked of a paused Redis, which may answer before the request gives
	// up.)
	if !pause {
		res := c.bridge(0).post(t, "counter", runBody("th-during", "run-1", true, userMsg("u1", "count")))
		if res.status != http.StatusServiceUnavailable || !strings.Contains(string(res.body), agui.CodeStoreUnavailable) {
			t.Fatalf("a run started during the outage: %d %s", res.status, res.body)
		}
	}
	time.Sleep(time.Until(began.Add(down))) // the outage itself, not a wait for a condition
	if pause {
		if err := r.Resume(); err != nil {
			t.Fatal(err)
		}
		t.Logf("redis-server resumed after %v", time.Since(began).Round(time.Millisecond))
	} else {
		r2, err := r.Restart(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r2.Kill)
		t.Logf("redis-server restarted after %v", time.Since(began).Round(time.Millisecond))
	}
	waitAllReadyz(t, c, http.StatusOK, 20*time.Second)
	rest.Wait()
	return c, shown
}

// TestStoreOutageRedisRestart5s: Redis is down for 5 s under three
// instances streaming six runs — inside the outage budget (lease/2). Every
// run goes on once Redis is back and finishes whole, each client saw one
// run that ends once, and the journal (read from another instance) holds
// exactly what the client was shown. The threads take new runs.
func TestStoreOutageRedisRestart5s(t *testing.T) {
	t.Parallel()
	c, shown := redisOutage(t, 6, 5*time.Second, false)
	wantRiddenOut(t, c, shown)
}

// TestStoreOutageRedisPaused5s: the same with Redis unreachable rather
// than restarted (paused: connections stay open, commands hang, and
// those sent meanwhile run when it resumes). A journal write whose answer
// was lost may have run: the retry then finds its numbers taken and
// checks the journal's last number instead of writing twice.
func TestStoreOutageRedisPaused5s(t *testing.T) {
	t.Parallel()
	c, shown := redisOutage(t, 3, 5*time.Second, true)
	wantRiddenOut(t, c, shown)
}

// wantRiddenOut checks runs that rode an outage out: each finished whole,
// its journal is what its client was shown, and its thread takes a new
// run.
func wantRiddenOut(t *testing.T, c *cluster, shown map[string][]sseFrame) {
	t.Helper()
	want := agents.CounterText(agents.DefaultCounterCount)
	for th, fs := range shown {
		wantEnded(t, th, fs, want)
		wantJournalIsShown(t, th, c.journal(t, 1, "counter", th), fs, true)
		if r := c.bridge(2).post(t, "counter", runBody(th, "run-2", true, userMsg("u1", "count"))); r.status != http.StatusOK || r.last().Type() != agui.EventRunFinished {
			t.Fatalf("%s: a new run after the outage: %d %s", th, r.status, r.body)
		}
	}
}

// TestStoreOutageRedis60s: Redis is down for 60 s — past the outage budget
// and past the runs' lease. Every run ends with RUN_ERROR
// store_unavailable, shown while Redis is still down; once it is back the
// instance that ran each run journals that end with the thread's release
// before any other instance could adopt the run (which would continue a
// run its client was told had ended), so the journal holds exactly what
// the client was shown, and the thread takes a new run.
func TestStoreOutageRedis60s(t *testing.T) {
	t.Parallel()
	c, shown := redisOutage(t, 3, 60*time.Second, false)
	for th, fs := range shown {
		wantEnded(t, th, fs, "")
		wantJournalIsShown(t, th, c.journal(t, 0, "counter", th), fs, false)
		if r := c.bridge(1).post(t, "counter", runBody(th, "run-2", true, userMsg("u1", "count"))); r.status != http.StatusOK || r.last().Type() != agui.EventRunFinished {
			t.Fatalf("%s: a new run after the outage: %d %s", th, r.status, r.body)
		}
	}
}
