package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// The restart tests run the bridge and the demo agents as real processes
// (built with go build) on an embedded store, and SIGKILL the bridge.

const (
	procStartTimeout = 20 * time.Second // one child process becomes ready
	procExitTimeout  = 10 * time.Second // a killed child process is reaped
	pollInterval     = 20 * time.Millisecond
)

// outBuffer collects a child's output for the failure log; firstLine is
// closed once a complete first line has been written.
type outBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	firstLine chan struct{}
	closed    bool
}

func newOutBuffer() *outBuffer { return &outBuffer{firstLine: make(chan struct{})} }

func (b *outBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if !b.closed && bytes.IndexByte(b.buf.Bytes(), '\n') >= 0 {
		b.closed = true
		close(b.firstLine)
	}
	return len(p), nil
}

func (b *outBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *outBuffer) line() string {
	s := b.String()
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// child is a started process; done is closed once it has been reaped.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdout *outBuffer
	stderr *outBuffer
	done   chan struct{}
	err    error // Wait's result, set before done is closed
}

// startChild starts bin with args. The process is SIGKILLed and reaped in
// t.Cleanup whatever happens, and its output is logged when t failed.
func startChild(t *testing.T, name, bin string, args ...string) *child {
	t.Helper()
	c := &child{name: name, cmd: exec.CommandContext(t.Context(), bin, args...),
		stdout: newOutBuffer(), stderr: newOutBuffer(), done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = c.stdout, c.stderr
	c.cmd.WaitDelay = procExitTimeout
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		status := "still running"
		if c.kill(t) {
			status = fmt.Sprint("exited: ", c.err)
		}
		if t.Failed() {
			t.Logf("%s (pid %d) %s\nstdout:\n%s\nstderr:\n%s", c.name, c.cmd.Process.Pid, status, c.stdout, c.stderr)
		}
	})
	return c
}

// kill SIGKILLs the process (a no-op once it exited) and waits until it
// has been reaped; false when it was not reaped in time.
func (c *child) kill(t *testing.T) bool {
	t.Helper()
	_ = c.cmd.Process.Kill() // SIGKILL on Linux
	select {
	case <-c.done:
		return true
	case <-time.After(procExitTimeout):
		t.Errorf("%s (pid %d) not reaped %v after SIGKILL", c.name, c.cmd.Process.Pid, procExitTimeout)
		return false
	}
}

// moduleRoot finds go.mod above the test's working directory (server).
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// built holds the binaries shared by the tests running at the same time:
// linking them is most of these tests' cost, so it is done once, and the
// directory goes when the last test using it ends.
var built struct {
	mu    sync.Mutex
	dir   string
	users int
}

// buildBinaries builds the bridge and demo-agents (or reuses the build of
// a test still running) and returns their paths.
func buildBinaries(t *testing.T) (bridgeBin, demoBin string) {
	t.Helper()
	built.mu.Lock()
	defer built.mu.Unlock()
	if built.users == 0 {
		dir, err := os.MkdirTemp("", "bridge-restart-test-")
		if err != nil {
			t.Fatal(err)
		}
		// Without symbol tables and DWARF the link takes half the time.
		cmd := exec.CommandContext(t.Context(), "go", "build", "-ldflags=-s -w", "-o", dir+string(filepath.Separator),
			"./cmd/bridge", "./examples/cmd/demo-agents")
		cmd.Dir = moduleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			_ = os.RemoveAll(dir)
			t.Fatalf("go build: %v\n%s", err, out)
		}
		built.dir = dir
	}
	built.users++
	dir := built.dir
	t.Cleanup(func() {
		built.mu.Lock()
		defer built.mu.Unlock()
		if built.users--; built.users == 0 {
			if err := os.RemoveAll(built.dir); err != nil {
				t.Error(err)
			}
			built.dir = ""
		}
	})
	return filepath.Join(dir, "bridge"), filepath.Join(dir, "demo-agents")
}

// startDemoAgents starts demo-agents and returns each agent's URL from its
// startup line.
func startDemoAgents(t *testing.T, bin string) map[string]string {
	t.Helper()
	c := startChild(t, "demo-agents", bin, "--listen", "127.0.0.1:0", "--delay", "-1ns")
	select {
	case <-c.stdout.firstLine:
	case <-c.done:
		t.Fatalf("demo-agents exited before its startup line: %v", c.err)
	case <-time.After(procStartTimeout):
		t.Fatalf("no startup line from demo-agents within %v", procStartTimeout)
	}
	var startup struct {
		Agents map[string]struct{ URL string } `json:"agents"`
	}
	if err := json.Unmarshal([]byte(c.stdout.line()), &startup); err != nil {
		t.Fatalf("demo-agents startup line %q: %v", c.stdout.line(), err)
	}
	urls := make(map[string]string, len(startup.Agents))
	for name, ep := range startup.Agents {
		urls[name] = ep.URL
	}
	return urls
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// bridgeProcs runs `bridge serve` processes, one at a time, on one config
// and one embedded store file.
type bridgeProcs struct {
	bin, config string
	url         string
	n           int
	current     *child
}

// newBridgeProcs writes the config: a free port, the embedded store in the
// temp dir and the named demo agents.
func newBridgeProcs(t *testing.T, bin string, demo map[string]string, names ...string) *bridgeProcs {
	t.Helper()
	return newBridgeProcsWith(t, bin, demo, "", names...)
}

// newBridgeProcsWith is newBridgeProcs with more top-level YAML (e.g. a
// server: section).
func newBridgeProcsWith(t *testing.T, bin string, demo map[string]string, extra string, names ...string) *bridgeProcs {
	t.Helper()
	dir := t.TempDir()
	addr := freePort(t)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "listen: %q\nstore: {kind: embedded, path: %q}\n%sagents:\n", addr, filepath.Join(dir, "bridge.db"), extra)
	for _, name := range names {
		u, ok := demo[name]
		if !ok {
			t.Fatalf("demo-agents has no agent %q", name)
		}
		fmt.Fprintf(&cfg, "  - name: %s\n    url: %q\n", name, u)
	}
	path := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return &bridgeProcs{bin: bin, config: path, url: "http://" + addr}
}

// start starts a new bridge process and waits until /readyz answers 200.
func (p *bridgeProcs) start(t *testing.T) *testBridge {
	t.Helper()
	p.n++
	c := startChild(t, fmt.Sprintf("bridge#%d", p.n), p.bin, "serve", "--config", p.config)
	p.current = c
	ctx, cancel := context.WithTimeout(t.Context(), procStartTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/readyz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return &testBridge{url: p.url}
			}
		}
		select {
		case <-c.done:
			t.Fatalf("%s exited before it was ready: %v\nstderr:\n%s", c.name, c.err, c.stderr)
		case <-ctx.Done():
			t.Fatalf("%s not ready within %v", c.name, procStartTimeout)
		case <-time.After(pollInterval):
		}
	}
}

// terminate sends SIGTERM to the running bridge and waits until it exits,
// which must be cleanly.
func (p *bridgeProcs) terminate(t *testing.T) {
	t.Helper()
	if err := p.current.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.current.done:
	case <-time.After(procExitTimeout):
		t.Fatalf("%s did not exit within %v of SIGTERM", p.current.name, procExitTimeout)
	}
	if p.current.err != nil {
		t.Fatalf("%s exited with %v after SIGTERM\nstderr:\n%s", p.current.name, p.current.err, p.current.stderr)
	}
	http.DefaultClient.CloseIdleConnections()
}

// kill SIGKILLs the running bridge and waits until it is gone.
func (p *bridgeProcs) kill(t *testing.T) {
	t.Helper()
	if !p.current.kill(t) {
		t.FailNow()
	}
	if p.current.cmd.ProcessState.Exited() {
		t.Fatalf("%s exited by itself (%v) instead of being killed", p.current.name, p.current.cmd.ProcessState)
	}
	// Connections to the dead process are useless.
	http.DefaultClient.CloseIdleConnections()
}

// interrupted posts a 1.0 run that must end in a single interrupt, and
// returns it.
func interrupted(t *testing.T, b *testBridge, agent, thread, text string) agui.Interrupt {
	t.Helper()
	r := b.post(t, agent, runBody(thread, "run-1", true, userMsg("u1", text)))
	r.check(t, true)
	o := r.outcome()
	if o == nil || o.Type != agui.OutcomeInterrupt || len(o.Interrupts) != 1 {
		t.Fatalf("%s: want one interrupt:\n%s", agent, r.body)
	}
	return o.Interrupts[0]
}

// dataLines is the stream without comments (keep-alives): its data lines.
func dataLines(body []byte) string {
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "data:") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestRestartBetweenInterruptAndResume: interrupts, the threads that hold
// them and the journal live in the embedded store, so a bridge SIGKILLed
// between interrupt and resume is resumed by the next process.
func TestRestartBetweenInterruptAndResume(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	procs := newBridgeProcs(t, bridgeBin, demo, "asker", "approver", "quiet-approver")
	b := procs.start(t)

	ask := interrupted(t, b, "asker", "th-ask", "What's the weather?")
	if ask.Reason != "input_required" || ask.Message != agents.AskerQuestion {
		t.Fatalf("asker interrupt %+v", ask)
	}
	approve := interrupted(t, b, "approver", "th-approve", "Book my flight")
	if approve.Reason != "tool_call" || approve.ToolCallID == "" {
		t.Fatalf("approver interrupt %+v", approve)
	}
	interrupted(t, b, "asker", "th-pending", "What's the weather?")
	quiet := interrupted(t, b, "quiet-approver", "th-quiet", "Book my flight")

	procs.kill(t)
	b = procs.start(t)

	// A pending interrupt survived: input without resume is refused.
	r := b.post(t, "asker", runBody("th-pending", "run-2", true,
		userMsg("u1", "What's the weather?"), userMsg("u2", "never mind, hello")))
	r.check(t, true)
	r.wantError(t, "interrupt_pending")

	resume := resumeBody("th-ask", "run-2", ask.ID, `{"city":"Paris"}`, userMsg("u1", "What's the weather?"))
	r = b.post(t, "asker", resume)
	r.check(t, true)
	if r.last().Type() != agui.EventRunFinished || r.outcome() != nil {
		t.Fatalf("asker resume must finish successfully:\n%s", r.body)
	}
	r.wantAnswerOnce(t, agents.WeatherAnswer("Paris"))

	approved := resumeBody("th-approve", "run-2", approve.ID, `{"approved":true}`, userMsg("u1", "Book my flight"))
	r2 := b.post(t, "approver", approved)
	r2.check(t, true)
	if r2.last().Type() != agui.EventRunFinished || r2.outcome() != nil {
		t.Fatalf("approver resume must finish successfully:\n%s", r2.body)
	}
	var result *agui.ToolCallResult
	for _, e := range r2.events {
		switch e := e.(type) {
		case *agui.ToolCallStart:
			t.Fatalf("the resumed run re-emitted TOOL_CALL_START:\n%s", r2.body)
		case *agui.ToolCallResult:
			if result != nil {
				t.Fatalf("two TOOL_CALL_RESULTs:\n%s", r2.body)
			}
			result = e
		}
	}
	if result == nil || result.ToolCallID != approve.ToolCallID {
		t.Fatalf("want TOOL_CALL_RESULT on %q, got %+v:\n%s", approve.ToolCallID, result, r2.body)
	}
	r2.wantAnswerOnce(t, agents.BookedAnswer(agents.BookingArgs()))

	// An agent that does not echo the call's result: the bridge reports the
	// approval it sent, in this process as in the one that raised the
	// interrupt, and a replay after another SIGKILL is the same bytes.
	quietResume := resumeBody("th-quiet", "run-2", quiet.ID, `{"approved":true}`, userMsg("u1", "Book my flight"))
	r3 := b.post(t, "quiet-approver", quietResume)
	r3.check(t, true)
	wantOneResultBeforeText(t, r3, quiet.ToolCallID, `"approved":true`)
	r3.wantAnswerOnce(t, agents.BookedAnswer(agents.BookingArgs()))
	wantQuiet := dataLines(r3.body)

	// Replaying the resume is answered from the journal: by this process,
	// and by the next one after another SIGKILL.
	want := dataLines(r.body)
	replay := resumeBody("th-ask", "run-3", ask.ID, `{"city":"Paris"}`, userMsg("u1", "What's the weather?"))
	if got := dataLines(b.post(t, "asker", replay).body); got != want {
		t.Fatalf("replay differs from the resumed run:\n%s\n---\n%s", want, got)
	}
	procs.kill(t)
	b = procs.start(t)
	if got := dataLines(b.post(t, "asker", replay).body); got != want {
		t.Fatalf("replay after a second restart differs from the resumed run:\n%s\n---\n%s", want, got)
	}
	if got := dataLines(b.post(t, "quiet-approver", quietResume).body); got != wantQuiet {
		t.Fatalf("quiet-approver replay after a restart differs:\n%s\n---\n%s", wantQuiet, got)
	}
}

// TestKillDuringRunIsTakenOver: a bridge SIGKILLed while a run streams
// leaves the A2A task running; the next process takes the run over and
// finishes it into the journal. A client that read part of the stream
// resumes after the last id it saw and gets the rest: together one valid
// run with the answer once. The thread then takes new runs.
func TestKillDuringRunIsTakenOver(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	procs := newBridgeProcs(t, bridgeBin, demo, "counter", "streamer")
	b := procs.start(t)

	// counter streams one number every 100ms for ten seconds.
	b, got := killMidStreamAndFollow(t, procs, b, "counter", "th-kill")
	got.wantAnswerOnce(t, agents.CounterText(agents.DefaultCounterCount))

	// The thread takes new runs, and the bridge serves others meanwhile.
	next := b.open(t, "counter", runBody("th-kill", "run-2", true, userMsg("u1", "count"), userMsg("u2", "again")))
	next.until(t, isContent)
	b.cancelThread(t, "counter", "th-kill")
	wantCancelledRun(t, next.result(t), true)
	r := b.post(t, "streamer", runBody("th-other", "run-1", true, userMsg("u1", "hello")))
	r.check(t, true)
	r.wantAnswerOnce(t, agents.StreamerAnswer("hello"))
}

// TestKillDuringTeamRunIsTakenOver: a 1.0 client's team run goes on after
// the bridge is killed mid-stream, as an agent's own run does. The team is
// a pipeline (counter, then streamer); the kill comes while counter
// counts. After the restart its member picks up its task, the pipeline
// hands counter's whole answer to streamer, and the stream read before the
// kill and after the takeover is one valid run with each answer once and
// no event lost or repeated.
func TestKillDuringTeamRunIsTakenOver(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	procs := newBridgeProcsWith(t, bridgeBin, demo,
		"teams:\n  - name: relay\n    strategy: sequential\n    members: [counter, streamer]\n", "counter", "streamer")
	b := procs.start(t)

	_, got := killMidStreamAndFollow(t, procs, b, "relay", "th-team-kill")
	text := attribution(t, got.events, true)
	counted := agents.CounterText(agents.DefaultCounterCount)
	if strings.Count(text["counter"], counted) != 1 {
		t.Fatalf("counter's answer is not shown once: %q", text["counter"])
	}
	if want := agents.StreamerAnswer(counted); strings.Count(text["streamer"], want) != 1 {
		t.Fatalf("streamer must echo counter's whole answer once: %q", text["streamer"])
	}
}

// killMidStreamAndFollow starts a 1.0 client's run of "count" on agent,
// SIGKILLs the bridge once the stream showed "3 ", starts another, and
// reads the thread's events from where the client stopped until the run
// ends. The two parts must be one valid run (the verifier), with every
// frame numbered one after the other (nothing lost, nothing twice), ending
// with RUN_FINISHED and no interrupt. It returns the new bridge and the run.
func killMidStreamAndFollow(t *testing.T, procs *bridgeProcs, b *testBridge, agent, thread string) (*testBridge, runResult) {
	t.Helper()
	lr := b.open(t, agent, runBody(thread, "run-1", true, userMsg("u1", "count")))
	var seen []sseFrame
	for f := range lr.frames {
		seen = append(seen, f)
		if strings.Contains(f.data, `"delta":"3 "`) {
			break
		}
	}
	procs.kill(t)
	lr.cancel()

	b = procs.start(t)
	last := seen[len(seen)-1].seq
	all := append(seen, collectFrames(t, b.stream(t, http.MethodGet, fmt.Sprintf("/agents/%s/threads/%s/events?after=%d", agent, thread, last), nil,
		http.Header{"Accept": {"text/event-stream"}}))...)
	events := decodeFrames(t, all)
	if err := agui.CheckStream(true, events); err != nil {
		t.Fatalf("the stream before the kill and after the takeover is not one valid run: %v", err)
	}
	got := runResult{events: events}
	if got.last().Type() != agui.EventRunFinished || got.outcome() != nil {
		t.Fatalf("the taken-over run ends with %s", got.last().Type())
	}
	for i, f := range all {
		if i > 0 && f.seq != all[i-1].seq+1 {
			t.Fatalf("sequence jumps from %d to %d", all[i-1].seq, f.seq)
		}
	}
	return b, got
}
