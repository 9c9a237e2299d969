package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

type settings struct {
	concurrency int
	duration    time.Duration
	store       string
	settle      time.Duration
	bridgeBin   string
	jsonOut     bool
	// goroutineSlack and heapSlack are how far above the baseline the
	// bridge may end and still count as back.
	goroutineSlack int
	heapSlack      float64
}

func main() {
	var s settings
	flag.IntVar(&s.concurrency, "concurrency", 1000, "runs in flight at once")
	flag.DurationVar(&s.duration, "duration", 10*time.Minute, "how long to keep the load on")
	flag.StringVar(&s.store, "store", "embedded", "the bridge's store: embedded or memory (which keeps every journal in the heap)")
	// Longer than the bridge's idle-connection timeout to the agents (90s):
	// pooled connections, and their goroutines, are not a leak.
	flag.DurationVar(&s.settle, "settle", 100*time.Second, "wait after the load before measuring the bridge again")
	flag.StringVar(&s.bridgeBin, "bridge", "", "a bridge binary (default: go build ./cmd/bridge)")
	flag.BoolVar(&s.jsonOut, "json", false, "print the report as JSON")
	flag.IntVar(&s.goroutineSlack, "goroutine-slack", 20, "goroutines above the baseline that still count as back")
	flag.Float64Var(&s.heapSlack, "heap-slack", 2, "heap in use, as a multiple of the baseline plus 16 MiB, that still counts as back")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := soak(ctx, s)
	if err != nil {
		log.Fatal(err)
	}
	if s.jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		rep.print(os.Stdout)
	}
	if !rep.OK {
		os.Exit(1)
	}
}

// report is what a soak found.
type report struct {
	Concurrency     int              `json:"concurrency"`
	Duration        string           `json:"duration"`
	Store           string           `json:"store"`
	Runs            int64            `json:"runs"`
	RunsPerSecond   float64          `json:"runsPerSecond"`
	Events          int64            `json:"events"`
	Failures        map[string]int64 `json:"failures"`
	Samples         []string         `json:"failureSamples,omitempty"`
	ByScenario      map[string]int64 `json:"byScenario"`
	Goroutines      [3]int           `json:"goroutines"` // baseline, peak, after
	HeapInuseMiB    [3]float64       `json:"heapInuseMiB"`
	RSSMiB          [3]float64       `json:"rssMiB"`
	GoroutinesBack  bool             `json:"goroutinesBack"`
	HeapBack        bool             `json:"heapBack"`
	OK              bool             `json:"ok"`
	BridgeCPUSecond float64          `json:"bridgeCPUSeconds"`
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "bridge-soak: %d runs in flight for %s, %s store\n", r.Concurrency, r.Duration, r.Store)
	fmt.Fprintf(w, "  runs %d (%.1f/s), events checked %d, bridge CPU %.1f s\n", r.Runs, r.RunsPerSecond, r.Events, r.BridgeCPUSecond)
	fmt.Fprintf(w, "  by scenario: %v\n", r.ByScenario)
	fmt.Fprintf(w, "  failures: %d %v\n", total(r.Failures), r.Failures)
	for _, s := range r.Samples {
		fmt.Fprintf(w, "    e.g. %s\n", s)
	}
	fmt.Fprintf(w, "  goroutines: baseline %d, peak %d, after %d (back: %v)\n", r.Goroutines[0], r.Goroutines[1], r.Goroutines[2], r.GoroutinesBack)
	fmt.Fprintf(w, "  heap in use: baseline %.1f MiB, peak %.1f MiB, after %.1f MiB (back: %v)\n", r.HeapInuseMiB[0], r.HeapInuseMiB[1], r.HeapInuseMiB[2], r.HeapBack)
	fmt.Fprintf(w, "  RSS: baseline %.1f MiB, peak %.1f MiB, after %.1f MiB\n", r.RSSMiB[0], r.RSSMiB[1], r.RSSMiB[2])
	fmt.Fprintf(w, "%d lost or malformed, %s\n", total(r.Failures), map[bool]string{true: "ok", false: "FAILED"}[r.OK])
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func soak(ctx context.Context, s settings) (*report, error) {
	dir, err := os.MkdirTemp("", "bridge-soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if s.bridgeBin == "" {
		s.bridgeBin = filepath.Join(dir, "bridge")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", s.bridgeBin, "./cmd/bridge").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/bridge: %v\n%s", err, out)
		}
	}
	demo, err := agents.Start(ctx, "127.0.0.1:0", agents.Options{})
	if err != nil {
		return nil, err
	}
	defer demo.Close()
	port, pprofPort := freePort(), freePort()
	cfg := fmt.Sprintf("listen: 127.0.0.1:%d\nstore: {kind: %s, path: %q}\nserver: {maxBodyBytes: 1048576}\nagents:\n",
		port, s.store, filepath.Join(dir, "bridge.db"))
	if s.store != "embedded" {
		cfg = fmt.Sprintf("listen: 127.0.0.1:%d\nstore: {kind: %s}\nagents:\n", port, s.store)
	}
	for _, name := range demo.Names() {
		cfg += fmt.Sprintf("  - {name: %s, url: %q}\n", name, demo.URL(name))
	}
	cfg += "teams:\n"
	for _, t := range agents.Teams() {
		cfg += fmt.Sprintf("  - {name: %s, strategy: %s, members: [%s]}\n", t.Name, t.Strategy, strings.Join(t.Members, ", "))
	}
	cfgFile := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	bridge := exec.Command(s.bridgeBin, "serve", "--config", cfgFile)
	bridge.Env = append(os.Environ(), fmt.Sprintf("BRIDGE_PPROF=127.0.0.1:%d", pprofPort))
	bridge.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	logFile, err := os.Create(filepath.Join(dir, "bridge.log"))
	if err != nil {
		return nil, err
	}
	bridge.Stdout, bridge.Stderr = logFile, logFile
	if err := bridge.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = bridge.Process.Signal(syscall.SIGTERM)
		_ = bridge.Wait()
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	prof := fmt.Sprintf("http://127.0.0.1:%d", pprofPort)
	if err := waitReady(ctx, base+"/readyz"); err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.concurrency, MaxConnsPerHost: 0}}
	w := &worker{base: base, client: client, failures: map[string]int64{}, byScenario: map[string]int64{}}

	// Warm up (every scenario once), then the baseline.
	for _, sc := range scenarios {
		if err := sc.run(ctx, w, rand.New(rand.NewPCG(1, 2)), "warmup"); err != nil {
			return nil, fmt.Errorf("warm-up %s: %w", sc.name, err)
		}
	}
	rep := &report{Concurrency: s.concurrency, Duration: s.duration.String(), Store: s.store}
	if rep.Goroutines[0], rep.HeapInuseMiB[0], err = measure(ctx, prof); err != nil {
		return nil, err
	}
	rep.RSSMiB[0] = rss(bridge.Process.Pid)
	cpu0 := cpuSeconds(bridge.Process.Pid)

	lctx, cancel := context.WithTimeout(ctx, s.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	var seq atomic.Int64
	for i := range s.concurrency {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			for lctx.Err() == nil {
				sc := scenarios[rng.IntN(len(scenarios))]
				id := fmt.Sprintf("soak-%d", seq.Add(1))
				err := sc.run(lctx, w, rng, id)
				if lctx.Err() != nil && err != nil {
					return // cut by the end of the soak, not a failure
				}
				w.note(sc.name, err)
			}
		})
	}
	// The peak, sampled while the load is on.
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-t.C:
				g, h, err := measure(lctx, prof)
				if err == nil {
					w.mu.Lock()
					rep.Goroutines[1] = max(rep.Goroutines[1], g)
					rep.HeapInuseMiB[1] = max(rep.HeapInuseMiB[1], h)
					rep.RSSMiB[1] = max(rep.RSSMiB[1], rss(bridge.Process.Pid))
					w.mu.Unlock()
				}
			}
		}
	}()
	wg.Wait()
	elapsed := time.Since(start)
	client.CloseIdleConnections() // the soak's own keep-alive connections
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(s.settle):
	}
	if rep.Goroutines[2], rep.HeapInuseMiB[2], err = measure(ctx, prof); err != nil {
		return nil, err
	}
	rep.RSSMiB[2] = rss(bridge.Process.Pid)
	rep.BridgeCPUSecond = cpuSeconds(bridge.Process.Pid) - cpu0
	rep.Runs, rep.Events = w.runs.Load(), w.events.Load()
	rep.RunsPerSecond = float64(rep.Runs) / elapsed.Seconds()
	rep.Failures, rep.Samples, rep.ByScenario = w.failures, w.samples, w.byScenario
	rep.GoroutinesBack = rep.Goroutines[2] <= rep.Goroutines[0]+s.goroutineSlack
	rep.HeapBack = rep.HeapInuseMiB[2] <= rep.HeapInuseMiB[0]*s.heapSlack+16
	rep.OK = total(rep.Failures) == 0 && rep.GoroutinesBack && rep.HeapBack && rep.Runs > 0
	return rep, nil
}

// worker holds what the load's goroutines share.
type worker struct {
	base   string
	client *http.Client
	runs   atomic.Int64
	events atomic.Int64

	mu         sync.Mutex
	failures   map[string]int64
	samples    []string
	byScenario map[string]int64
}

func (w *worker) note(scenario string, err error) {
	w.runs.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byScenario[scenario]++
	if err == nil {
		return
	}
	kind := scenario + ": " + strings.SplitN(err.Error(), ":", 2)[0]
	w.failures[kind]++
	if len(w.samples) < 10 {
		w.samples = append(w.samples, scenario+": "+err.Error())
	}
}

// stream is one run's response: its SSE frames.
type stream struct {
	ids    []int64
	raw    []string
	events []agui.Event
}

// post runs body on agent and reads the whole stream.
func (w *worker) post(ctx context.Context, agent string, body any) (*stream, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.base+"/agents/"+agent, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return w.read(req)
}

// replay reads the thread's journal from the start.
func (w *worker) replay(ctx context.Context, agent, thread string) (*stream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/agents/"+agent+"/threads/"+thread+"/events?after=0", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	return w.read(req)
}

func (w *worker) read(req *http.Request) (*stream, error) {
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	s := &stream{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var id int64
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			ev, err := agui.Decode([]byte(data))
			if err != nil {
				return nil, fmt.Errorf("malformed event: %v: %s", err, data)
			}
			s.ids, s.raw, s.events = append(s.ids, id), append(s.raw, data), append(s.events, ev)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("stream cut: %w", err)
	}
	w.events.Add(int64(len(s.events)))
	return s, nil
}

// check verifies a run's stream for its client generation.
func check(s *stream, v1 bool) error {
	if err := agui.CheckStream(v1, s.events); err != nil {
		return fmt.Errorf("verifier: %w", err)
	}
	n := 0
	for _, e := range s.events {
		if e.Type() == agui.EventRunFinished || e.Type() == agui.EventRunError {
			n++
		}
	}
	if n != 1 || !agui.IsTerminalEvent([]byte(s.raw[len(s.raw)-1])) {
		return fmt.Errorf("terminal: %d terminal events", n)
	}
	for i := 1; i < len(s.ids); i++ {
		if s.ids[i] <= s.ids[i-1] {
			return fmt.Errorf("sequence: id %d after %d", s.ids[i], s.ids[i-1])
		}
	}
	return nil
}

// texts is each member's (or the agent's, "") assistant text.
func texts(events []agui.Event) map[string]string {
	owner := map[string]string{}
	out := map[string]string{}
	for _, e := range events {
		switch e := e.(type) {
		case *agui.TextMessageStart:
			owner[e.MessageID] = e.Name
		case *agui.TextMessageContent:
			out[owner[e.MessageID]] += e.Delta
		}
	}
	return out
}

func once(text, want string) error {
	if n := strings.Count(text, want); n != 1 {
		return fmt.Errorf("answer: %q appears %d times in %q", want, n, text)
	}
	return nil
}

func input(thread, run, text string, v1 bool, resume []map[string]any) map[string]any {
	in := map[string]any{"threadId": thread, "runId": run,
		"messages": []map[string]any{{"id": "u1", "role": "user", "content": text}}}
	if v1 {
		in["protocolVersion"] = "1.0"
	}
	if resume != nil {
		in["resume"] = resume
	}
	return in
}

func interrupts(s *stream) []agui.Interrupt {
	if f, ok := s.events[len(s.events)-1].(*agui.RunFinished); ok && f.Outcome != nil && f.Outcome.Type == agui.OutcomeInterrupt {
		return f.Outcome.Interrupts
	}
	return nil
}

// sameJournal checks that the thread's journal holds exactly what the
// runs streamed, in order.
func (w *worker) sameJournal(ctx context.Context, agent, thread string, runs ...*stream) error {
	j, err := w.replay(ctx, agent, thread)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	var want []string
	for _, r := range runs {
		want = append(want, r.raw...)
	}
	if len(j.raw) != len(want) {
		return fmt.Errorf("journal: %d events, the runs streamed %d", len(j.raw), len(want))
	}
	for i := range want {
		if j.raw[i] != want[i] {
			return fmt.Errorf("journal: event %d differs", i)
		}
	}
	return nil
}

type scenario struct {
	name string
	run  func(ctx context.Context, w *worker, rng *rand.Rand, thread string) error
}

// single runs one message on an agent and expects answer once.
func single(agent, text, answer string) func(context.Context, *worker, *rand.Rand, string) error {
	return func(ctx context.Context, w *worker, rng *rand.Rand, thread string) error {
		v1 := rng.IntN(2) == 0
		s, err := w.post(ctx, agent, input(thread, "r1", text, v1, nil))
		if err != nil {
			return err
		}
		if err := check(s, v1); err != nil {
			return err
		}
		if err := once(strings.Join(mapValues(texts(s.events)), "\n"), answer); err != nil {
			return err
		}
		return w.sameJournal(ctx, agent, thread, s)
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// resumed asks, answers every interrupt with payloads (by member prefix,
// "" for an agent), and expects answers (by member, "" for an agent).
func resumed(agent, text string, payloads map[string]any, answers map[string]string, want int) func(context.Context, *worker, *rand.Rand, string) error {
	return func(ctx context.Context, w *worker, rng *rand.Rand, thread string) error {
		v1 := rng.IntN(2) == 0
		first, err := w.post(ctx, agent, input(thread, "r1", text, v1, nil))
		if err != nil {
			return err
		}
		if err := check(first, v1); err != nil {
			return err
		}
		ins := interrupts(first)
		if len(ins) != want {
			return fmt.Errorf("interrupts: %d, want %d", len(ins), want)
		}
		var resume []map[string]any
		for _, in := range ins {
			member, _, _ := strings.Cut(in.ID, ":")
			p, ok := payloads[member]
			if !ok {
				p = payloads[""]
			}
			resume = append(resume, map[string]any{"interruptId": in.ID, "status": "resolved", "payload": p})
		}
		second, err := w.post(ctx, agent, input(thread, "r2", text, v1, resume))
		if err != nil {
			return err
		}
		if err := check(second, v1); err != nil {
			return err
		}
		got := texts(second.events)
		for member, answer := range answers {
			if err := once(got[member], answer); err != nil {
				return err
			}
		}
		return w.sameJournal(ctx, agent, thread, first, second)
	}
}

var scenarios = []scenario{
	{"streamer", single("streamer", "Tell me about Lisbon", agents.StreamerAnswer("Tell me about Lisbon"))},
	{"narrator", single("narrator", "Find the tallest tower", agents.NarratorAnswer("Find the tallest tower"))},
	{"chatter", single("chatter", "Say hello", "Hello, world")},
	{"pipeline", single("pipeline", "Tell me about Lisbon", agents.StreamerAnswer(agents.NarratorAnswer("Tell me about Lisbon")))},
	{"asker-resume", resumed("asker", "What is the weather?", map[string]any{"": map[string]any{"city": "Paris"}},
		map[string]string{"": agents.WeatherAnswer("Paris")}, 1)},
	{"approver-resume", resumed("approver", "Book me a flight", map[string]any{"": map[string]any{"approved": true}},
		map[string]string{"": agents.BookedAnswer(agents.BookingArgs())}, 1)},
	{"concierge-resume", resumed("concierge", "Weather and a flight", map[string]any{
		"asker": map[string]any{"city": "Lisbon"}, "approver": map[string]any{"approved": true}},
		map[string]string{"asker": agents.WeatherAnswer("Lisbon"), "approver": agents.BookedAnswer(agents.BookingArgs())}, 2)},
}

// measure reads the bridge's goroutine count and heap in use (after a GC)
// from its profiler.
func measure(ctx context.Context, prof string) (goroutines int, heapMiB float64, err error) {
	get := func(path string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, prof+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	g, err := get("/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscanf(g, "goroutine profile: total %d", &goroutines); err != nil {
		return 0, 0, fmt.Errorf("goroutine profile: %w", err)
	}
	h, err := get("/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(h, "\n") {
		if v, ok := strings.CutPrefix(line, "# HeapInuse = "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return goroutines, n / (1 << 20), nil
		}
	}
	return 0, 0, errors.New("no HeapInuse in the heap profile")
}

func rss(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // USER_HZ
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitReady(ctx context.Context, url string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return errors.New("the bridge did not become ready")
}
