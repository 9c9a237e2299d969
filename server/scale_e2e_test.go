package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/internal/redistest"
)

// The scale-out tests run several `bridge serve` processes (built with go
// build) on one real redis-server, over the demo agents in their own
// process, and SIGKILL bridge instances under load.

// scaleLease is the tests' store.lease: short, so a killed instance's runs
// are adopted within seconds.
const scaleLease = 2 * time.Second

// cluster is n bridge instances on one config and one Redis, each on its
// own port.
type cluster struct {
	bin, config string
	addrs       []string
	procs       []*child
	starts      int
}

// newCluster starts redis-server and writes the instances' config.
func newCluster(t *testing.T, bin string, demo map[string]string, n int, names ...string) *cluster {
	t.Helper()
	dir := t.TempDir()
	r, err := redistest.Start(t.Context(), dir)
	if err != nil {
		t.Fatal(err) // a missing redis-server fails the test: `make test` installs it
	}
	t.Cleanup(r.Kill)
	return newClusterOn(t, bin, demo, n, fmt.Sprintf("{kind: redis, url: %q, lease: %s}", "redis://"+r.Addr+"/0", scaleLease), names...)
}

// newClusterOn writes the instances' config with the store block store
// and starts them.
func newClusterOn(t *testing.T, bin string, demo map[string]string, n int, store string, names ...string) *cluster {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "listen: 127.0.0.1:0\nstore: %s\nagents:\n", store)
	for _, name := range names {
		fmt.Fprintf(&cfg, "  - name: %s\n    url: %q\n", name, demo[name])
	}
	path := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cluster{bin: bin, config: path, procs: make([]*child, n)}
	for range n {
		c.addrs = append(c.addrs, freePort(t))
	}
	for i := range n {
		c.start(t, i)
	}
	return c
}

func (c *cluster) bridge(i int) *testBridge { return &testBridge{url: "http://" + c.addrs[i]} }

// start starts instance i and waits until its /readyz answers 200.
func (c *cluster) start(t *testing.T, i int) {
	t.Helper()
	c.starts++
	p := startChild(t, fmt.Sprintf("bridge[%d]#%d", i, c.starts), c.bin, "serve", "--config", c.config, "--listen", c.addrs[i])
	c.procs[i] = p
	ctx, cancel := context.WithTimeout(t.Context(), procStartTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.addrs[i]+"/readyz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before it was ready: %v\nstderr:\n%s", p.name, p.err, p.stderr)
		case <-ctx.Done():
			t.Fatalf("%s not ready within %v", p.name, procStartTimeout)
		case <-time.After(pollInterval):
		}
	}
}

// kill SIGKILLs instance i.
func (c *cluster) kill(t *testing.T, i int) {
	t.Helper()
	if !c.procs[i].kill(t) {
		t.FailNow()
	}
	http.DefaultClient.CloseIdleConnections()
}

// journal replays a thread's whole journal from instance i (/events after
// 0), following the run in progress to its end.
func (c *cluster) journal(t *testing.T, i int, agent, thread string) []sseFrame {
	t.Helper()
	return collectFramesWithin(t, c.bridge(i).stream(t, http.MethodGet, "/agents/"+agent+"/threads/"+thread+"/events?after=0", nil,
		http.Header{"Accept": {"text/event-stream"}}), 60*time.Second)
}

// collectFramesWithin is collectFrames with a longer bound: a run whose
// instance died waits a lease for its adopter.
func collectFramesWithin(t *testing.T, lr *liveRun, d time.Duration) []sseFrame {
	t.Helper()
	var out []sseFrame
	timeout := time.After(d)
	for {
		select {
		case f, ok := <-lr.frames:
			if !ok {
				return out
			}
			out = append(out, f)
		case <-timeout:
			t.Fatalf("the stream did not end within %v", d)
		}
	}
}

// wantWholeRun checks one thread's journal: sequence numbers 1, 2, … with
// no gap or repeat, one valid run (one RUN_STARTED, one terminal event,
// RUN_FINISHED without an outcome) whose text is exactly want, each chunk
// once and in order.
func wantWholeRun(t *testing.T, thread string, frames []sseFrame, want string) {
	t.Helper()
	for i, f := range frames {
		if f.seq != int64(i+1) {
			t.Errorf("%s: frame %d has id %d: the journal lost or repeated events", thread, i, f.seq)
			return
		}
	}
	events := decodeFrames(t, frames)
	if err := agui.CheckStream(true, events); err != nil {
		t.Errorf("%s: the journal is not one valid run: %v", thread, err)
		return
	}
	starts, ends := 0, 0
	for _, e := range events {
		switch e.Type() {
		case agui.EventRunStarted:
			starts++
		case agui.EventRunFinished, agui.EventRunError:
			ends++
		}
	}
	r := runResult{events: events}
	if starts != 1 || ends != 1 || r.last().Type() != agui.EventRunFinished || r.outcome() != nil {
		t.Errorf("%s: %d RUN_STARTED, %d terminal events, last %s", thread, starts, ends, r.last().Type())
		return
	}
	if got := r.text(); got != want {
		t.Errorf("%s: text differs from what the agent produced:\n got %q\nwant %q", thread, got, want)
	}
}

// TestScaleOutKillsLoseNothing: three instances on one Redis take a load of
// concurrent streaming runs spread across them; instances are SIGKILLed at
// random mid-run (some restarted, some not). The A2A tasks go on, the
// surviving instances adopt the dead ones' runs once their leases lapse,
// and every thread's journal, replayed from a surviving instance, holds
// exactly the run the agent produced: every chunk once, in order, one start
// and one end.
func TestScaleOutKillsLoseNothing(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	killsLoseNothing(t, newCluster(t, bridgeBin, demo, 3, "counter"))
}

// TestScaleOutKillsLoseNothingOnCluster is the same on a Redis Cluster of
// three primaries: every thread's keys and its shard's lease index share a
// slot, the shards spread over the primaries, and adoption works the same.
func TestScaleOutKillsLoseNothingOnCluster(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	rc, err := redistest.StartCluster(t.Context(), t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Stop)
	store := fmt.Sprintf("{kind: redis, cluster: [%s], lease: %s}", strings.Join(rc.Addrs(), ", "), scaleLease)
	killsLoseNothing(t, newClusterOn(t, bridgeBin, demo, 3, store, "counter"))
}

func killsLoseNothing(t *testing.T, c *cluster) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	// counter streams "1 " … "100 ", one chunk every 100ms: ten seconds.
	const runs = 12
	t0 := time.Now()
	threads := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		threads[i] = fmt.Sprintf("th-load-%d", i)
		b := c.bridge(i % 3)
		lr := b.open(t, "counter", runBody(threads[i], "run-1", true, userMsg("u1", "count")))
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Once the agent has named its task the client goes away: the
			// run goes on without it, and is read back from the journal.
			for ev := range lr.events {
				if isContent(ev) {
					break
				}
			}
			lr.cancel()
		}()
	}
	wg.Wait()
	t.Logf("%d runs streaming after %v", runs, time.Since(t0).Round(time.Millisecond))

	// Kill instances at random while the runs stream; never the last one
	// alive. Some come back, some do not.
	alive := []bool{true, true, true}
	for range 3 {
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
		var up []int
		for i, ok := range alive {
			if ok {
				up = append(up, i)
			}
		}
		if len(up) == 1 {
			break
		}
		victim := up[rng.IntN(len(up))]
		t.Logf("kill -9 instance %d", victim)
		c.kill(t, victim)
		alive[victim] = false
		if rng.IntN(2) == 0 {
			t.Logf("restart instance %d", victim)
			c.start(t, victim)
			alive[victim] = true
		}
	}
	survivor := 0
	for !alive[survivor] {
		survivor++
	}

	want := agents.CounterText(agents.DefaultCounterCount)
	begin := time.Now()
	var check sync.WaitGroup
	for _, th := range threads {
		check.Add(1)
		go func() {
			defer check.Done()
			wantWholeRun(t, th, c.journal(t, survivor, "counter", th), want)
			t.Logf("%s: journal complete after %v", th, time.Since(begin).Round(time.Millisecond))
		}()
	}
	check.Wait()
	t.Logf("journals checked after %v", time.Since(t0).Round(time.Millisecond))
	// Every thread is free again: a new run on it is taken (with nothing
	// new to say, it ends at once).
	for _, th := range threads {
		r := c.bridge(survivor).post(t, "counter", runBody(th, "run-2", true, userMsg("u1", "count")))
		if r.status != http.StatusOK || r.last().Type() != agui.EventRunFinished {
			t.Fatalf("%s: a new run after the adoption: %d %s", th, r.status, r.body)
		}
	}
}

// TestScaleOutAcrossInstances: what one instance started, another serves:
// a second run on a busy thread is refused on any instance; /events and a
// WebSocket subscribe on B follow a run streaming on A; a resume on B
// answers an interrupt raised on A; a cancel on B stops A's run (its task
// known or not yet named), once.
func TestScaleOutAcrossInstances(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	c := newCluster(t, bridgeBin, demo, 2, "counter", "latecomer", "asker", "narrator", "signin")
	a, b := c.bridge(0), c.bridge(1)

	t.Run("busy and follow", func(t *testing.T) {
		lr := a.open(t, "counter", runBody("th-follow", "run-1", true, userMsg("u1", "count")))
		lr.until(t, isContent)
		if r := b.post(t, "counter", runBody("th-follow", "run-2", true, userMsg("u1", "count"), userMsg("u2", "more"))); r.status != http.StatusConflict {
			t.Fatalf("a second run on B while A runs the thread: %d %s", r.status, r.body)
		}
		sse := b.stream(t, http.MethodGet, "/agents/counter/threads/th-follow/events?after=0", nil, http.Header{"Accept": {"text/event-stream"}})
		ws := b.mustDialWS(t, "counter")
		ws.send(t, map[string]any{"type": "subscribe", "threadId": "th-follow", "after": 0})
		envs := ws.untilTerminal(t)
		frames := collectFramesWithin(t, sse, 30*time.Second)
		wantWholeRun(t, "th-follow", frames, agents.CounterText(agents.DefaultCounterCount))
		if len(envs) != len(frames) {
			t.Fatalf("WebSocket on B got %d envelopes, /events %d", len(envs), len(frames))
		}
		for i, e := range envs {
			if e.Seq != frames[i].seq || string(e.Event) != frames[i].data {
				t.Fatalf("envelope %d differs from /events: %+v vs %+v", i, e, frames[i])
			}
		}
		lr.cancel()
	})

	t.Run("resume on the other instance", func(t *testing.T) {
		in := interrupted(t, a, "asker", "th-resume", "What is the weather?")
		r := b.post(t, "asker", resumeBody("th-resume", "run-2", in.ID, `{"city":"Paris"}`, userMsg("u1", "What is the weather?")))
		r.check(t, true)
		if r.last().Type() != agui.EventRunFinished || r.outcome() != nil || r.text() != agents.WeatherAnswer("Paris") {
			t.Fatalf("the resume on B: %s\n%s", r.last().Type(), r.body)
		}
	})

	// A sign-in completes out of band while A keeps reading the task's
	// stream; the resume lands on B, which did not follow the task: it
	// learns from the agent where the task is and shows the answer.
	t.Run("sign-in resume on the other instance", func(t *testing.T) {
		r := a.post(t, "signin", runBody("th-signin", "run-1", true, userMsg("u1", "Show my files")))
		r.check(t, true)
		o := r.outcome()
		if o == nil || o.Type != agui.OutcomeInterrupt || len(o.Interrupts) != 1 || o.Interrupts[0].Reason != "a2a:auth_required" {
			t.Fatalf("want a sign-in interrupt on A:\n%s", r.body)
		}
		in := o.Interrupts[0]
		taskID, _ := in.Metadata["a2a"].(map[string]any)["taskId"].(string)
		resp, err := http.Post(demo["signin"]+"authorize?task="+taskID, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("authorize task %q: %d", taskID, resp.StatusCode)
		}
		r = b.post(t, "signin", resumeBody("th-signin", "run-2", in.ID, `{}`, userMsg("u1", "Show my files")))
		r.check(t, true)
		if r.last().Type() != agui.EventRunFinished || r.outcome() != nil || r.text() != agents.SigninAnswer {
			t.Fatalf("the sign-in resume on B: %s\n%s", r.last().Type(), r.body)
		}
	})

	t.Run("cancel on the other instance", func(t *testing.T) {
		lr := a.open(t, "counter", runBody("th-cancel", "run-1", true, userMsg("u1", "count")))
		lr.until(t, isContent)
		v := b.cancelThread(t, "counter", "th-cancel")
		if v.Cancel == nil || !v.Cancel.Requested || v.Cancel.Repeated {
			t.Fatalf("cancel on B: %+v", v.Cancel)
		}
		// The second cancel sends nothing more: the run is still ending
		// (repeated) or has ended with its task cancelled.
		again := b.cancelThread(t, "counter", "th-cancel")
		if c := again.Cancel; c == nil || !(c.Repeated || (!c.Requested && c.TaskState == "canceled")) {
			t.Fatalf("second cancel on B: %+v", again.Cancel)
		}
		wantCancelledRun(t, lr.result(t), true)
	})

	t.Run("cancel before the task is named", func(t *testing.T) {
		// latecomer says nothing for a second, not even its task.
		lr := a.open(t, "latecomer", runBody("th-late", "run-1", true, userMsg("u1", "count")))
		deadline := time.Now().Add(5 * time.Second)
		for b.threadView(t, "latecomer", "th-late").ActiveRunID == "" {
			if time.Now().After(deadline) {
				t.Fatal("the run never showed on B")
			}
			time.Sleep(pollInterval)
		}
		v := b.cancelThread(t, "latecomer", "th-late")
		if v.Cancel == nil || !v.Cancel.Requested || !v.Cancel.WaitingForTask {
			t.Fatalf("cancel on B before the task is known: %+v", v.Cancel)
		}
		wantCancelledRun(t, lr.result(t), true)
	})
}

// TestDemoReplicas runs `bridge demo --replicas 2` as a process: it starts
// its own redis-server and two instances, prints their URLs, and a thread
// started on one is followed and cancelled from the other. The command is
// cmd/bridge's (demoreplicas.go); the test sits here, with the process
// helpers it shares with the scale-out tests.
func TestDemoReplicas(t *testing.T) {
	t.Parallel()
	bridgeBin, _ := buildBinaries(t)
	var c *child
	var port int
	// A port found free (and the one after it) can be taken by another
	// test's server before the demo binds it, which the demo refuses with
	// "is not free": try other ports.
	for attempt := 0; c == nil; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		c = startChild(t, "demo", bridgeBin, "demo", "--replicas", "2", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
		deadline := time.After(procStartTimeout)
		for c != nil && !strings.Contains(c.stdout.String(), "Press Ctrl-C") {
			select {
			case <-c.done:
				if attempt < 2 && strings.Contains(c.stderr.String(), "is not free") {
					c = nil
					continue
				}
				t.Fatalf("demo exited: %v\n%s", c.err, c.stderr)
			case <-deadline:
				t.Fatalf("demo did not print its walkthrough:\n%s\n%s", c.stdout, c.stderr)
			case <-time.After(pollInterval):
			}
		}
	}
	out := c.stdout.String()
	urls := regexp.MustCompile(`instance \d: (http://\S+)`).FindAllStringSubmatch(out, -1)
	if len(urls) != 2 || urls[0][1] != "http://127.0.0.1:"+strconv.Itoa(port) || urls[1][1] != "http://127.0.0.1:"+strconv.Itoa(port+1) {
		t.Fatalf("instance URLs %v in:\n%s", urls, out)
	}
	if !strings.Contains(out, "redis://127.0.0.1:") || !strings.Contains(out, "kill -9 ") {
		t.Fatalf("the walkthrough lacks the Redis URL or the kill step:\n%s", out)
	}
	a, b := &testBridge{url: urls[0][1]}, &testBridge{url: urls[1][1]}
	lr := a.open(t, "counter", runBody("move", "run-1", true, userMsg("u1", "count")))
	lr.until(t, isContent)
	follow := b.stream(t, http.MethodGet, "/agents/counter/threads/move/events?after=0", nil, http.Header{"Accept": {"text/event-stream"}})
	first := <-follow.frames
	b.cancelThread(t, "counter", "move")
	wantCancelledRun(t, lr.result(t), true)
	events := decodeFrames(t, append([]sseFrame{first}, collectFrames(t, follow)...))
	if err := agui.CheckStream(true, events); err != nil {
		t.Fatalf("the run followed on the second instance: %v", err)
	}
	if text := (runResult{events: events}).text(); !strings.HasPrefix(agents.CounterText(100), text) || text == "" {
		t.Fatalf("the followed text %q is not the counter's", text)
	}
	// Ctrl-C stops the instances and the Redis it started.
	ctx, cancel := context.WithTimeout(t.Context(), procExitTimeout)
	defer cancel()
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-ctx.Done():
		t.Fatal("demo did not stop on SIGINT")
	}
}
