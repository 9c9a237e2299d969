package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// The reload tests run `bridge serve` as a child process, send it SIGHUP
// or rewrite its config file (--watch), and watch its log for the reload.

// reloadConfig is a bridge config on a fixed port and store, with the
// given keys (key → principal), agents (name → demo agent, and its allow
// list after a "|"), teams and extra top-level YAML.
func reloadConfig(listen, storePath string, demo map[string]string, keys map[string]string, agentList []string, teams []string, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\nstore: {kind: embedded, path: %q}\n", listen, storePath)
	if len(keys) > 0 {
		b.WriteString("auth:\n  apiKeys:\n")
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		}) {
			fmt.Fprintf(&b, "    - {key: %q, principal: %q}\n", k, keys[k])
		}
	}
	b.WriteString("agents:\n")
	for _, a := range agentList {
		name, rest, _ := strings.Cut(a, "|")
		agent, desc, _ := strings.Cut(name, "~")
		fmt.Fprintf(&b, "  - name: %s\n    url: %q\n", agent, demo[agent])
		if desc != "" {
			fmt.Fprintf(&b, "    description: %q\n", desc)
		}
		if rest != "" {
			fmt.Fprintf(&b, "    allow: [%s]\n", rest)
		}
	}
	if len(teams) > 0 {
		b.WriteString("teams:\n")
		for _, t := range teams {
			name, members, _ := strings.Cut(t, "=")
			fmt.Fprintf(&b, "  - {name: %s, strategy: parallel, members: [%s]}\n", name, members)
		}
	}
	b.WriteString(extra)
	return b.String()
}

// waitLog waits until the child's stderr holds want n times.
func waitLog(t *testing.T, c *child, want string, n int) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := c.stderr.String()
		if strings.Count(s, want) >= n {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q not logged %d times within 20s; stderr:\n%s", want, n, s)
		}
		select {
		case <-c.done:
			t.Fatalf("%s exited: %v\n%s", c.name, c.err, s)
		case <-time.After(pollInterval):
		}
	}
}

func waitReady(t *testing.T, c *child, url, key string) {
	t.Helper()
	deadline := time.Now().Add(procStartTimeout)
	for {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/healthz", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not up within %v\n%s", c.name, procStartTimeout, c.stderr)
		}
		select {
		case <-c.done:
			t.Fatalf("%s exited: %v\n%s", c.name, c.err, c.stderr)
		case <-time.After(pollInterval):
		}
	}
}

// TestReloadUnderLoad: a bridge streams counter runs over SSE (ten
// seconds each) and a WebSocket follows one of them, when SIGHUP reloads a
// config that removes an agent and a team, adds agents and a team, changes
// an agent, rotates the API key, adds allow lists and lowers a limit. The
// new settings answer the next request at once: the new key in, the old
// one out, the removed agent's threads 404, the added agents served, the
// allow list and the limit enforced. The runs in flight, started with the
// old key and the old agent, end whole: every event once, in order, and
// the WebSocket got exactly the journal. Then an invalid file and a
// listen change are refused, counted in bridge_config_reload_failures_total,
// and leave everything as it was.
func TestReloadUnderLoad(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	dir := t.TempDir()
	listen := freePort(t)
	store := filepath.Join(dir, "bridge.db")
	path := filepath.Join(dir, "bridge.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(reloadConfig(listen, store, demo, map[string]string{"key-one-0123456789": "alice"},
		[]string{"counter", "streamer"}, []string{"duo=counter, streamer"}, ""))
	c := startChild(t, "bridge", bridgeBin, "serve", "--config", path)
	b := &testBridge{url: "http://" + listen}
	waitReady(t, c, b.url, "key-one-0123456789")
	old := http.Header{"Authorization": {"Bearer key-one-0123456789"}}

	// Before: a streamer thread exists (it will 404 after the reload).
	if r := b.do(t, http.MethodPost, "/agents/streamer", "key-one-0123456789", runBody("th-streamer", "run-1", true, userMsg("u1", "hi"))); r.status != http.StatusOK {
		t.Fatalf("streamer before the reload: %d %s", r.status, r.body)
	}
	const runs = 4
	live := make([]*liveRun, runs)
	for i := range runs {
		live[i] = b.stream(t, http.MethodPost, "/agents/counter", runBody(fmt.Sprintf("th-load-%d", i), "run-1", true, userMsg("u1", "count")), old)
	}
	for _, lr := range live {
		lr.until(t, isContent)
	}
	ws, resp, err := b.dialWS(t, "counter", old)
	if err != nil {
		t.Fatalf("dial: %v (%+v)", err, resp)
	}
	ws.send(t, map[string]any{"type": "subscribe", "threadId": "th-load-0", "after": 0})

	write(reloadConfig(listen, store, demo, map[string]string{"key-two-0123456789": "alice", "key-bob-0123456789": "bob"},
		[]string{"counter~Counts to a hundred, reloaded", "narrator|alice", "replier|bob"}, []string{"pair=narrator, replier"},
		"limits: {maxMessages: 2}\nlog: {level: debug}\n"))
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, c, "config reloaded", 1)

	// The new settings, at once.
	if r := b.do(t, http.MethodGet, "/agents", "key-one-0123456789", nil); r.status != http.StatusUnauthorized {
		t.Errorf("the removed key after the reload: %d", r.status)
	}
	r := b.do(t, http.MethodGet, "/agents", "key-two-0123456789", nil)
	// replier is bob's only: alice's list leaves it out.
	if got := agentNames(t, r.body); r.status != http.StatusOK || !slices.Equal(got, []string{"counter", "narrator", "pair"}) {
		t.Errorf("GET /agents after the reload: %d %v", r.status, got)
	}
	if r := b.do(t, http.MethodGet, "/agents/counter", "key-two-0123456789", nil); !strings.Contains(string(r.body), "Counts to a hundred, reloaded") {
		t.Errorf("the changed agent's description: %s", r.body)
	}
	for _, gone := range []string{"/agents/streamer", "/agents/duo"} {
		if r := b.do(t, http.MethodPost, gone, "key-two-0123456789", runBody("th-streamer", "run-2", true, userMsg("u1", "hi"))); r.status != http.StatusNotFound {
			t.Errorf("POST %s after its removal: %d %s", gone, r.status, r.body)
		}
	}
	if r := b.do(t, http.MethodGet, "/agents/streamer/threads/th-streamer", "key-two-0123456789", nil); r.status != http.StatusNotFound {
		t.Errorf("a removed agent's thread: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/narrator", "key-two-0123456789", runBody("th-n", "run-1", true, userMsg("u1", "tell"))); r.status != http.StatusOK ||
		!strings.Contains(string(r.body), `"RUN_FINISHED"`) {
		t.Errorf("the added agent: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/replier", "key-two-0123456789", runBody("th-r", "run-1", true, userMsg("u1", "hi"))); r.status != http.StatusForbidden {
		t.Errorf("an agent whose new allow list leaves alice out: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/replier", "key-bob-0123456789", runBody("th-r", "run-1", true, userMsg("u1", "hi"))); r.status != http.StatusOK {
		t.Errorf("an agent whose new allow list has bob: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/narrator", "key-two-0123456789",
		runBody("th-m", "run-1", true, userMsg("u1", "a"), userMsg("u2", "b"), userMsg("u3", "c"))); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("three messages under the new limits.maxMessages 2: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/pair", "key-two-0123456789", runBody("th-pair", "run-1", true, userMsg("u1", "hi"))); r.status != http.StatusOK {
		t.Errorf("the added team: %d %s", r.status, r.body)
	}

	// The runs in flight end whole, on what they started with.
	want := agents.CounterText(agents.DefaultCounterCount)
	for i, lr := range live {
		var frames []sseFrame
		for f := range lr.frames {
			frames = append(frames, f)
		}
		wantWholeRun(t, fmt.Sprintf("th-load-%d", i), frames, want)
	}
	envs := ws.untilTerminal(t)
	journal := collectFramesWithin(t, b.stream(t, http.MethodGet, "/agents/counter/threads/th-load-0/events?after=0", nil,
		http.Header{"Authorization": {"Bearer key-two-0123456789"}, "Accept": {"text/event-stream"}}), 30*time.Second)
	if len(envs) != len(journal) {
		t.Fatalf("the WebSocket got %d envelopes, the journal holds %d events", len(envs), len(journal))
	}
	for i, e := range envs {
		if e.Seq != journal[i].seq || string(e.Event) != journal[i].data {
			t.Fatalf("envelope %d differs from the journal: %+v vs %+v", i, e, journal[i])
		}
	}

	// An invalid file: refused with its path and line, counted; the
	// reloaded config stays.
	write("listen: " + listen + "\nstore: {kind: embedded, path: " + store + "}\nagentz: []\n")
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	logs := waitLog(t, c, "config reload refused", 1)
	if !strings.Contains(logs, path+": agentz: unknown key: did you mean agents? (line 3)") {
		t.Errorf("the refusal does not name the file, the key and its line:\n%s", logs)
	}
	// A listen change: refused, it needs a restart.
	write(reloadConfig(freePort(t), store, demo, map[string]string{"key-two-0123456789": "alice"}, []string{"counter"}, nil, ""))
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	logs = waitLog(t, c, "config reload refused", 2)
	if !strings.Contains(logs, "listen changed") {
		t.Errorf("the listen change's refusal does not say so:\n%s", logs)
	}
	metrics := string(b.do(t, http.MethodGet, "/metrics", "key-two-0123456789", nil).body)
	for _, line := range []string{"bridge_config_reload_failures_total 2", "bridge_config_reloads_total 1"} {
		if !strings.Contains(metrics, line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if r := b.do(t, http.MethodPost, "/agents/narrator", "key-two-0123456789", runBody("th-n2", "run-1", true, userMsg("u1", "tell"))); r.status != http.StatusOK {
		t.Errorf("after the refused reloads, the reloaded config is not in force: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodGet, "/agents", "key-one-0123456789", nil); r.status != http.StatusUnauthorized {
		t.Errorf("after the refused reloads, the removed key: %d", r.status)
	}
	if c.stderr.String() == "" || !strings.Contains(c.stderr.String(), "level=DEBUG") {
		t.Errorf("log.level debug did not take effect: no DEBUG line in the log")
	}
}

// TestReloadWatch: serve --watch applies a changed file without a signal,
// and refuses an invalid one, which it does not retry until the file
// changes again.
func TestReloadWatch(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	dir := t.TempDir()
	listen := freePort(t)
	store := filepath.Join(dir, "bridge.db")
	path := filepath.Join(dir, "bridge.yaml")
	write := func(yaml string) {
		t.Helper()
		// Written beside and renamed over, as editors and ConfigMaps do.
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(reloadConfig(listen, store, demo, nil, []string{"streamer"}, nil, ""))
	c := startChild(t, "bridge", bridgeBin, "serve", "--config", path, "--watch")
	b := &testBridge{url: "http://" + listen}
	waitReady(t, c, b.url, "")
	write(reloadConfig(listen, store, demo, nil, []string{"streamer", "narrator"}, nil, ""))
	waitLog(t, c, "config reloaded", 1)
	r := b.post(t, "narrator", runBody("th-1", "run-1", true, userMsg("u1", "tell")))
	if r.status != http.StatusOK || r.last().Type() != agui.EventRunFinished {
		t.Fatalf("the agent the file added: %d %s", r.status, r.body)
	}
	write("listen: " + listen + "\nagents: [{name: x}]\n")
	logs := waitLog(t, c, "config reload refused", 1)
	if !strings.Contains(logs, "file changed") {
		t.Errorf("the refusal does not say the file changed:\n%s", logs)
	}
	if r := b.post(t, "narrator", runBody("th-2", "run-1", true, userMsg("u1", "tell"))); r.status != http.StatusOK {
		t.Fatalf("after the invalid file: %d %s", r.status, r.body)
	}
}

// TestReloadWatchSeesAChangeBeforeItStarts: a file changed after the
// config was loaded but before the watch first reads it (while the store
// opens, or the moment the bridge is ready) is still reloaded. The watch
// once took its first reading late and missed such a change for good.
func TestReloadWatchSeesAChangeBeforeItStarts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bridge.yaml")
	agents := "agents:\n  - {name: x, url: \"http://127.0.0.1:1/\"}\n"
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("listen: 127.0.0.1:0\nstore: {kind: memory}\n"+yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(agents)
	loadedSum := FileSum(path)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	write(agents + "  - {name: y, url: \"http://127.0.0.1:1/\"}\n")
	ctx, cancel := context.WithCancel(t.Context())
	logs := newOutBuffer()
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)), Options{
			Reload: &Reload{Path: path, Watch: true, LoadedSum: loadedSum},
		})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "config reloaded") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the change made before the watch started was not reloaded within 10s (the watch reads every %v); log:\n%s", watchInterval, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "agents=2") {
		t.Errorf("the reload did not apply the changed file; log:\n%s", logs)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
