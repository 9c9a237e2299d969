package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestMain lets the test binary stand in for the bench executable: the
// driver starts os.Executable() for its agent and limit subcommands, and
// marks those children with childEnv.
func TestMain(m *testing.M) {
	if os.Getenv(strings.Split(childEnv, "=")[0]) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestEndToEnd runs the whole chunks mode at a tiny size: a real agent, the
// limit and a real `bridge serve` (memory store), and checks that the report
// holds sane numbers, that every run ended as it should, and that nothing is
// left behind. It asserts nothing about time.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the bench's temp dir goes here, so we can see it removed
	args := []string{"-runs", "3", "-chunks", "20", "-concurrency", "2", "-warmup", "1", "-ttfe", "3",
		"-targets", "relay,limit,bridge", "-store", "memory"}
	cfg, err := parseSettings(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.verbose = true // the children's logs, shown if the test fails
	var progress lockedBuffer
	rep, err := runBench(t.Context(), cfg, args, &progress)
	if err != nil {
		t.Fatalf("runBench: %v\nprogress and the children's stderr:\n%s", err, progress.String())
	}

	if len(rep.Targets) != 3 || rep.Targets[0].Name != "relay" || rep.Targets[1].Name != "limit" || rep.Targets[2].Name != "bridge" {
		t.Fatalf("targets = %+v, want relay, limit and bridge", rep.Targets)
	}
	checkTargets(t, rep, 3, 20)
	for _, r := range rep.Targets {
		if r.Runs != 3 || r.Failed != 0 || r.TTFEFailed != 0 || r.WarmupFailed != 0 {
			t.Errorf("%s: %d runs, %d failed, %d TTFE runs failed, %d warm-up runs failed (first errors: %q, %q); want 3 runs, none failed",
				r.Name, r.Runs, r.Failed, r.TTFEFailed, r.WarmupFailed, r.ErrorSample, r.WarmupError)
		}
		// Failed == 0 means every run ended with RUN_FINISHED (COMPLETED for
		// the limit) after exactly -chunks chunk events; check the sums too.
		if r.A2AChunks != 60 || r.ChunkEvents != 60 || r.ChunkEventsPerA2A != 1 {
			t.Errorf("%s: %d A2A chunks, %d chunk events (%.2f per chunk); want 60, 60, 1", r.Name, r.A2AChunks, r.ChunkEvents, r.ChunkEventsPerA2A)
		}
		if r.EventsPerRun <= 20 {
			t.Errorf("%s: %.1f events per run, want more than the 20 chunks", r.Name, r.EventsPerRun)
		}
		if r.ChunksPerSecond <= 0 || r.WallSeconds <= 0 || r.PeakRSSKiB <= 0 || r.Agent.PeakRSSKiB <= 0 {
			t.Errorf("%s: chunks/s %v, wall %v s, peak RSS %d KiB, agent peak RSS %d KiB; want all positive",
				r.Name, r.ChunksPerSecond, r.WallSeconds, r.PeakRSSKiB, r.Agent.PeakRSSKiB)
		}
		// CPU is counted in 10 ms ticks: 60 chunks may well cost zero.
		if r.CPUSeconds < 0 || r.CPUMicrosPerChunk < 0 || r.Agent.CPUSeconds < 0 {
			t.Errorf("%s: negative CPU: %+v", r.Name, r)
		}
		if r.TTFESamples != 3 || r.TTFEMedianMs <= 0 || r.TTFEMinMs > r.TTFEMedianMs || r.TTFEMedianMs > r.TTFEMaxMs {
			t.Errorf("%s: TTFE %d samples, min %v, median %v, max %v ms", r.Name, r.TTFESamples, r.TTFEMinMs, r.TTFEMedianMs, r.TTFEMaxMs)
		}
	}
	if rep.Ratios == nil || rep.Ratios.BridgeOverRelay < 0 {
		t.Errorf("ratios = %+v", rep.Ratios)
	}
	if t.Failed() {
		t.Logf("progress and the children's stderr:\n%s", progress.String())
	}

	var text, js bytes.Buffer
	if err := rep.writeText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.writeJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bridge-bench -runs 3 -chunks 20", "nproc=", "go version go", "CPU µs/chunk", "connections to the agent"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, &text)
		}
	}
	if !strings.Contains(js.String(), `"cpuMicrosPerChunk"`) {
		t.Errorf("JSON report lacks cpuMicrosPerChunk:\n%s", &js)
	}

	if left := childrenOf(t, os.Getpid()); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) > 0 {
		t.Errorf("temp dir not cleaned: %v %v", entries, err)
	}
}

// TestEndToEndUsersAgentAndClient runs the paced shape at a tiny size with
// the @a2a-js/sdk agent and the @ag-ui/client HttpAgent reader (Node; the
// bench installs their pinned packages with npm ci when missing), through
// the relay and the bridge, and checks that every chunk arrived with a
// latency sample and the counters were read. It asserts nothing about time.
func TestEndToEndUsersAgentAndClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge, starts node")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node on PATH: the JS agent and the HttpAgent reader need it (make test installs it for the conformance suite)")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	args := []string{"-agent", "js", "-reader", "httpagent", "-shape", "paced", "-pace", "2ms",
		"-runs", "3", "-chunks", "10", "-concurrency", "2", "-warmup", "1", "-ttfe", "2",
		"-targets", "relay,limit,bridge", "-store", "memory"}
	cfg, err := parseSettings(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.verbose = true
	var progress lockedBuffer
	rep, err := runBench(t.Context(), cfg, args, &progress)
	if err != nil {
		t.Fatalf("runBench: %v\nprogress and the children's stderr:\n%s", err, progress.String())
	}
	if len(rep.Targets) != 3 {
		t.Fatalf("targets = %+v, want relay, limit and bridge", rep.Targets)
	}
	checkTargets(t, rep, 3, 10)
	for _, r := range rep.Targets {
		if r.Name != "limit" && (r.Reader == nil || !strings.Contains(r.ReaderProcess, "@ag-ui/client 1.0.0")) {
			t.Errorf("%s: read by %q (usage %+v), want the @ag-ui/client reader", r.Name, r.ReaderProcess, r.Reader)
		}
	}
	var text bytes.Buffer
	if err := rep.writeText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent: js", "shape paced", "pace 2 ms", "reader httpagent", "read/write syscalls/chunk", "latency p50/p99 ms"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, &text)
		}
	}
	if t.Failed() {
		t.Logf("progress and the children's stderr:\n%s", progress.String())
	}
	if left := childrenOf(t, os.Getpid()); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// checkTargets checks what every chunks-mode target reports: every run
// ended as it should with every chunk, each chunk has a latency sample (the
// agents stamp every one), and the syscall counters were read (a process
// that moved runs × chunks chunks over sockets made some).
func checkTargets(t *testing.T, rep *report, runs, chunks int) {
	t.Helper()
	for _, r := range rep.Targets {
		if r.Runs != runs || r.Failed != 0 {
			t.Errorf("%s: %d runs, %d failed (first error %q); want %d, none failed", r.Name, r.Runs, r.Failed, r.ErrorSample, runs)
		}
		if want := int64(runs * chunks); r.ChunkEvents != want || r.LatencySamples != int(want) {
			t.Errorf("%s: %d chunk events, %d latency samples; want %d of each", r.Name, r.ChunkEvents, r.LatencySamples, want)
		}
		if r.LatencyP50Ms < 0 || r.LatencyP50Ms > r.LatencyP99Ms || r.LatencyP99Ms > r.LatencyMaxMs {
			t.Errorf("%s: latency p50 %v, p99 %v, max %v ms: not ordered", r.Name, r.LatencyP50Ms, r.LatencyP99Ms, r.LatencyMaxMs)
		}
		if r.ReadSyscalls <= 0 || r.WriteSyscalls <= 0 || r.ReadSyscallsPerChunk <= 0 {
			t.Errorf("%s: %d read and %d write syscalls: the counters were not read", r.Name, r.ReadSyscalls, r.WriteSyscalls)
		}
	}
}

// lockedBuffer is a bytes.Buffer that the bench and the children's stderr
// readers can write to at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(t *testing.T, pid int) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/status")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, path := range dirs {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		var name, ppid string
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Name:"); ok {
				name = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
		}
		if ppid == strconv.Itoa(pid) {
			out = append(out, name+" ("+filepath.Base(filepath.Dir(path))+")")
		}
	}
	return out
}
