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
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
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
	// goroutineSlack, heapSlack, fdSlack and rssSlack are how far above
	// the baseline the bridge may end and still count as back.
	goroutineSlack int
	heapSlack      float64
	fdSlack        int
	rssSlack       float64
	// abuse, when on, runs hostile clients beside the honest workers.
	abuse abuseSettings
	// keep, when set, is where the bridge's log and its heap and
	// goroutine profiles after the settle period are saved.
	keep string
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
	flag.IntVar(&s.fdSlack, "fd-slack", 10, "open file descriptors above the baseline that still count as back")
	flag.Float64Var(&s.rssSlack, "rss-slack", 64, "MiB of anonymous RSS (the Go heap's pages, not the store's mapped file) above twice the baseline that still count as back")
	flag.StringVar(&s.keep, "keep", "", "a directory to save the bridge's log and its heap and goroutine profiles after the settle period in (heap.pprof: go tool pprof)")
	s.abuse.flags(flag.CommandLine)
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

// report is what a soak found. The [3] figures are the bridge at its
// baseline (after start and a warm-up), at its peak (sampled every 5 s
// while the load is on) and after (the settle period after the load).
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
	Latency         latency          `json:"latencyMs"` // of the honest runs that passed, each scenario whole
	Goroutines      [3]int           `json:"goroutines"`
	HeapInuseMiB    [3]float64       `json:"heapInuseMiB"`
	HeapLiveMiB     [3]float64       `json:"heapLiveMiB"` // HeapAlloc after a GC: the objects still reachable
	RSSMiB          [3]float64       `json:"rssMiB"`
	RSSAnonMiB      [3]float64       `json:"rssAnonMiB"` // RssAnon: without the store's mapped file
	FDs             [3]int           `json:"fds"`
	StoreMiB        [3]float64       `json:"storeMiB,omitempty"` // the embedded store's file
	GoroutinesBack  bool             `json:"goroutinesBack"`
	HeapBack        bool             `json:"heapBack"`
	RSSBack         bool             `json:"rssBack"`
	FDsBack         bool             `json:"fdsBack"`
	Abuse           *abuseReport     `json:"abuse,omitempty"`
	OK              bool             `json:"ok"`
	BridgeCPUSecond float64          `json:"bridgeCPUSeconds"`
}

func (r *report) print(w io.Writer) {
	mode := ""
	if r.Abuse != nil {
		mode = ", under abuse"
	}
	fmt.Fprintf(w, "bridge-soak: %d runs in flight for %s, %s store%s\n", r.Concurrency, r.Duration, r.Store, mode)
	fmt.Fprintf(w, "  runs %d (%.1f/s), events checked %d, bridge CPU %.1f s\n", r.Runs, r.RunsPerSecond, r.Events, r.BridgeCPUSecond)
	fmt.Fprintf(w, "  by scenario: %v\n", r.ByScenario)
	fmt.Fprintf(w, "  latency of a passed scenario: p50 %.0f ms, p95 %.0f ms, p99 %.0f ms, max %.0f ms\n", r.Latency.P50, r.Latency.P95, r.Latency.P99, r.Latency.Max)
	fmt.Fprintf(w, "  failures: %d %v\n", total(r.Failures), r.Failures)
	for _, s := range r.Samples {
		fmt.Fprintf(w, "    e.g. %s\n", s)
	}
	if r.Abuse != nil {
		r.Abuse.print(w)
	}
	fmt.Fprintf(w, "  goroutines: baseline %d, peak %d, after %d (back: %v)\n", r.Goroutines[0], r.Goroutines[1], r.Goroutines[2], r.GoroutinesBack)
	fmt.Fprintf(w, "  heap in use: baseline %.1f MiB, peak %.1f MiB, after %.1f MiB; live %.1f, %.1f, %.1f MiB (back: %v)\n",
		r.HeapInuseMiB[0], r.HeapInuseMiB[1], r.HeapInuseMiB[2], r.HeapLiveMiB[0], r.HeapLiveMiB[1], r.HeapLiveMiB[2], r.HeapBack)
	fmt.Fprintf(w, "  RSS: baseline %.1f MiB, peak %.1f MiB, after %.1f MiB; anonymous %.1f, %.1f, %.1f MiB (back: %v)\n",
		r.RSSMiB[0], r.RSSMiB[1], r.RSSMiB[2], r.RSSAnonMiB[0], r.RSSAnonMiB[1], r.RSSAnonMiB[2], r.RSSBack)
	fmt.Fprintf(w, "  open fds: baseline %d, peak %d, after %d (back: %v)\n", r.FDs[0], r.FDs[1], r.FDs[2], r.FDsBack)
	if r.StoreMiB != [3]float64{} {
		fmt.Fprintf(w, "  store file: %.1f MiB at baseline, %.1f MiB at the peak, %.1f MiB after\n", r.StoreMiB[0], r.StoreMiB[1], r.StoreMiB[2])
	}
	fmt.Fprintf(w, "%d lost or malformed, %s\n", total(r.Failures), map[bool]string{true: "ok", false: "FAILED"}[r.OK])
}

// latency summarizes durations, in milliseconds.
type latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func summarize(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	slices.Sort(d)
	at := func(q float64) float64 {
		return float64(d[min(len(d)-1, int(q*float64(len(d))))]) / float64(time.Millisecond)
	}
	return latency{P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: float64(d[len(d)-1]) / float64(time.Millisecond)}
}

// sample is the bridge's figures at one moment.
type sample struct {
	goroutines    int
	heap, live    float64 // MiB: HeapInuse, HeapAlloc
	rss           float64 // MiB
	rssAnon, file float64 // MiB
	fds           int
}

// take reads them: goroutines and heap (after a GC) from the profiler,
// the rest from /proc and the store's file.
func take(ctx context.Context, prof string, pid int, storeFile string) (sample, error) {
	var s sample
	g, mem, err := measure(ctx, prof)
	if err != nil {
		return s, err
	}
	s.goroutines, s.heap, s.live = g, mem["HeapInuse"]/(1<<20), mem["HeapAlloc"]/(1<<20)
	st := procStatus(pid)
	s.rss, s.rssAnon = st["VmRSS"]/1024, st["RssAnon"]/1024
	s.fds = openFDs(pid)
	if fi, err := os.Stat(storeFile); err == nil {
		s.file = float64(fi.Size()) / (1 << 20)
	}
	return s, nil
}

// put records s as figure i (0 baseline, 1 peak, 2 after); the peak keeps
// the largest of each.
func (r *report) put(i int, s sample) {
	if i == 1 {
		r.Goroutines[1] = max(r.Goroutines[1], s.goroutines)
		r.HeapInuseMiB[1] = max(r.HeapInuseMiB[1], s.heap)
		r.HeapLiveMiB[1] = max(r.HeapLiveMiB[1], s.live)
		r.RSSMiB[1] = max(r.RSSMiB[1], s.rss)
		r.RSSAnonMiB[1] = max(r.RSSAnonMiB[1], s.rssAnon)
		r.FDs[1] = max(r.FDs[1], s.fds)
		r.StoreMiB[1] = max(r.StoreMiB[1], s.file)
		return
	}
	r.HeapLiveMiB[i] = s.live
	r.Goroutines[i], r.HeapInuseMiB[i], r.RSSMiB[i], r.RSSAnonMiB[i], r.FDs[i], r.StoreMiB[i] = s.goroutines, s.heap, s.rss, s.rssAnon, s.fds, s.file
}

// judge decides, with the stated slack, whether the bridge came back to
// its baseline. RSS is judged on its anonymous part: the embedded store's
// file is mapped, and its pages count in VmRSS as the file grows, which is
// the store's size, not memory the bridge holds.
func (r *report) judge(s settings) {
	r.GoroutinesBack = r.Goroutines[2] <= r.Goroutines[0]+s.goroutineSlack
	r.HeapBack = r.HeapInuseMiB[2] <= r.HeapInuseMiB[0]*s.heapSlack+16
	r.RSSBack = r.RSSAnonMiB[2] <= 2*r.RSSAnonMiB[0]+s.rssSlack
	r.FDsBack = r.FDs[2] <= r.FDs[0]+s.fdSlack
	r.OK = total(r.Failures) == 0 && r.Runs > 0 && r.GoroutinesBack && r.HeapBack && r.RSSBack && r.FDsBack &&
		(r.Abuse == nil || r.Abuse.ok())
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
	var endless *endlessAgent
	if s.abuse.on {
		if endless, err = startEndless(ctx, s.abuse.endlessInterval); err != nil {
			return nil, err
		}
		defer endless.Close()
	}
	var heavy *endlessAgent
	if s.abuse.on && s.abuse.heavy > 0 {
		if heavy, err = startHeavy(ctx); err != nil {
			return nil, err
		}
		defer heavy.Close()
	}
	port, pprofPort := freePort(), freePort()
	storeFile := filepath.Join(dir, "bridge.db")
	var upstreams []upstream
	for _, name := range demo.Names() {
		upstreams = append(upstreams, upstream{name, demo.URL(name), ""})
	}
	if endless != nil {
		upstreams = append(upstreams, upstream{endlessName, endless.url, s.abuse.endlessTimeout.String()})
	}
	if heavy != nil {
		upstreams = append(upstreams, upstream{heavyName, heavy.url, ""})
	}
	cfg := bridgeConfig(s, port, storeFile, upstreams)
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
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_ = bridge.Wait()
	}()
	defer func() {
		_ = bridge.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	prof := fmt.Sprintf("http://127.0.0.1:%d", pprofPort)
	if err := waitReady(ctx, base+"/readyz", exited); err != nil {
		log, _ := os.ReadFile(logFile.Name())
		return nil, fmt.Errorf("%w; its log:\n%s", err, log)
	}
	pid := bridge.Process.Pid
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.concurrency, MaxConnsPerHost: 0}}
	w := &worker{base: base, client: client, failures: map[string]int64{}, byScenario: map[string]int64{}}
	var ab *abuser
	if s.abuse.on {
		ab = newAbuser(base, s.abuse)
		ab.cpu = func() float64 { return cpuSeconds(pid) }
	}

	// Warm up (every scenario once, and the abuse's paths), then the baseline.
	wctx := withKey(ctx, honestKey(s, 0))
	for _, sc := range scenarios {
		if err := sc.run(wctx, w, rand.New(rand.NewPCG(1, 2)), "warmup"); err != nil {
			return nil, fmt.Errorf("warm-up %s: %w", sc.name, err)
		}
	}
	if ab != nil {
		if err := ab.warmUp(ctx); err != nil {
			return nil, fmt.Errorf("warm-up of the abuse: %w", err)
		}
	}
	// The baseline is the bridge at rest: the warm-up's connections
	// closed, and the cancelled endless run given time to end.
	client.CloseIdleConnections()
	if ab != nil {
		ab.closeIdle()
	}
	if !sleep(ctx, 3*time.Second) {
		return nil, ctx.Err()
	}
	rep := &report{Concurrency: s.concurrency, Duration: s.duration.String(), Store: s.store}
	if s.store != "embedded" {
		storeFile = ""
	}
	base0, err := take(ctx, prof, pid, storeFile)
	if err != nil {
		return nil, err
	}
	rep.put(0, base0)
	cpu0 := cpuSeconds(pid)

	lctx, cancel := context.WithTimeout(ctx, s.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	var seq atomic.Int64
	for i := range s.concurrency {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			ctx := withKey(lctx, honestKey(s, i))
			for lctx.Err() == nil {
				sc := scenarios[rng.IntN(len(scenarios))]
				id := fmt.Sprintf("soak-%d", seq.Add(1))
				t0 := time.Now()
				err := sc.run(ctx, w, rng, id)
				if lctx.Err() != nil && err != nil {
					return // cut by the end of the soak, not a failure
				}
				w.note(sc.name, err, time.Since(t0))
			}
		})
	}
	if ab != nil {
		ab.start(lctx, &wg)
	}
	// The peak, sampled while the load is on.
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sampleEvery(lctx, func() {
			if sm, err := take(lctx, prof, pid, storeFile); err == nil {
				rep.put(1, sm)
			}
		})
	}()
	wg.Wait()
	<-sampled
	elapsed := time.Since(start)
	client.CloseIdleConnections() // the soak's own keep-alive connections
	if ab != nil {
		ab.closeIdle()
	}
	// The settle, sampled too: each sample's GC is what an idle bridge
	// gets from the runtime's forced GC every two minutes anyway, and what
	// wakes the scavenger that gives freed pages back to the OS.
	sctx, scancel := context.WithTimeout(ctx, s.settle)
	sampleEvery(sctx, func() { _, _ = take(sctx, prof, pid, storeFile) })
	scancel()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	after, err := take(ctx, prof, pid, storeFile)
	if err != nil {
		return nil, err
	}
	rep.put(2, after)
	if s.keep != "" {
		if err := keep(ctx, s.keep, prof, logFile.Name()); err != nil {
			return nil, err
		}
	}
	rep.BridgeCPUSecond = cpuSeconds(pid) - cpu0
	rep.Runs, rep.Events = w.runs.Load(), w.events.Load()
	rep.RunsPerSecond = float64(rep.Runs) / elapsed.Seconds()
	rep.Failures, rep.Samples, rep.ByScenario = w.failures, w.samples, w.byScenario
	rep.Latency = summarize(w.latencies)
	if ab != nil {
		rep.Abuse = ab.report()
	}
	rep.judge(s)
	return rep, nil
}

// sampleEvery calls sample every 5 s until ctx ends.
func sampleEvery(ctx context.Context, sample func()) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			sample()
		}
	}
}

// bridgeConfig is the bridge's config: the demo agents and teams on the
// chosen store; under abuse also the endless agent (its run timeout the
// abuse's), API keys for the honest principals and the abusers (so that
// per-principal limits tell them apart), the per-principal rate, and
// limits.maxRunBytes when asked for.
func bridgeConfig(s settings, port int, storeFile string, upstreams []upstream) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: 127.0.0.1:%d\n", port)
	if s.store == "embedded" {
		fmt.Fprintf(&b, "store: {kind: embedded, path: %q}\n", storeFile)
	} else {
		fmt.Fprintf(&b, "store: {kind: %s}\n", s.store)
	}
	b.WriteString("server: {maxBodyBytes: 1048576}\n")
	if s.abuse.on {
		b.WriteString("auth:\n  apiKeys:\n")
		for i := range honestPrincipals(s) {
			fmt.Fprintf(&b, "    - {key: %s, principal: honest-%d}\n", honestKey(s, i), i)
		}
		for _, p := range abusers {
			fmt.Fprintf(&b, "    - {key: %s, principal: %s}\n", keyOf(p), p)
		}
		var limits []string
		if r := s.abuse.rate; r > 0 {
			limits = append(limits, fmt.Sprintf("perPrincipal: {requestsPerSecond: %g, burst: %d}", r, int(math.Ceil(2*r))))
		}
		if n := s.abuse.maxRunBytes; n > 0 {
			limits = append(limits, fmt.Sprintf("maxRunBytes: %d", n))
		}
		if len(limits) > 0 {
			fmt.Fprintf(&b, "limits: {%s}\n", strings.Join(limits, ", "))
		}
	}
	b.WriteString("agents:\n")
	for _, u := range upstreams {
		if u.runTimeout != "" {
			fmt.Fprintf(&b, "  - {name: %s, url: %q, timeouts: {run: %s}}\n", u.name, u.url, u.runTimeout)
		} else {
			fmt.Fprintf(&b, "  - {name: %s, url: %q}\n", u.name, u.url)
		}
	}
	b.WriteString("teams:\n")
	for _, t := range agents.Teams() {
		fmt.Fprintf(&b, "  - {name: %s, strategy: %s, members: [%s]}\n", t.Name, t.Strategy, strings.Join(t.Members, ", "))
	}
	return b.String()
}

// upstream is one agent of the bridge's config; runTimeout is its
// timeouts.run ("": the default).
type upstream struct {
	name, url, runTimeout string
}

// The principals of the abuse, each with its own API key: mallory runs
// the endless agent over SSE, flooder floods WebSockets, slowpoke sends
// slow, slowloris and oversized requests.
const (
	mallory  = "mallory"
	flooder  = "flooder"
	slowpoke = "slowpoke"
)

var abusers = []string{mallory, flooder, slowpoke}

// keyOf is principal's API key (at least 16 characters, as auth wants).
func keyOf(principal string) string { return "soak-key-" + principal + "-0123456789" }

// honestPrincipals is how many principals the honest workers are spread
// over: eight workers each, so that one principal's request rate stays
// well below the abuse's per-principal rate.
func honestPrincipals(s settings) int { return max(1, (s.concurrency+7)/8) }

// honestKey is worker i's API key; "" without the abuse (no auth).
func honestKey(s settings, i int) string {
	if !s.abuse.on {
		return ""
	}
	return keyOf(fmt.Sprintf("honest-%d", i%honestPrincipals(s)))
}

type keyContext struct{}

// withKey makes the soak's requests on ctx carry key as their bearer
// credential ("" for none).
func withKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyContext{}, key)
}

func authorize(req *http.Request) {
	if key, _ := req.Context().Value(keyContext{}).(string); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
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
	latencies  []time.Duration
}

func (w *worker) note(scenario string, err error, took time.Duration) {
	w.runs.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byScenario[scenario]++
	if err == nil {
		w.latencies = append(w.latencies, took)
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
	authorize(req)
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

// measure reads the bridge's goroutine count and its runtime.MemStats
// (after a GC: HeapInuse, HeapAlloc, HeapReleased, …, in bytes) from its
// profiler.
func measure(ctx context.Context, prof string) (goroutines int, mem map[string]float64, err error) {
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
		return 0, nil, err
	}
	if _, err := fmt.Sscanf(g, "goroutine profile: total %d", &goroutines); err != nil {
		return 0, nil, fmt.Errorf("goroutine profile: %w", err)
	}
	h, err := get("/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, nil, err
	}
	mem = map[string]float64{}
	for _, line := range strings.Split(h, "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = "); ok && strings.HasPrefix(line, "# ") {
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				mem[k] = n
			}
		}
	}
	if _, ok := mem["HeapInuse"]; !ok {
		return 0, nil, errors.New("no HeapInuse in the heap profile")
	}
	return goroutines, mem, nil
}

// keep saves the bridge's log and its heap (after a GC) and goroutine
// profiles in dir.
func keep(ctx context.Context, dir, prof, logName string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	log, err := os.ReadFile(logName)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bridge.log"), log, 0o644); err != nil {
		return err
	}
	for name, path := range map[string]string{"heap.pprof": "/debug/pprof/heap?gc=1", "heap.txt": "/debug/pprof/heap?debug=1",
		"goroutines.txt": "/debug/pprof/goroutine?debug=2"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, prof+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// procStatus reads the kB figures of /proc/PID/status (VmRSS, RssAnon,
// RssFile, …); an empty map when the process is gone.
func procStatus(pid int) map[string]float64 {
	out := map[string]float64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if v, isKB := strings.CutSuffix(strings.TrimSpace(v), " kB"); ok && isKB {
			out[k], _ = strconv.ParseFloat(v, 64)
		}
	}
	return out
}

// openFDs counts the process's open file descriptors.
func openFDs(pid int) int {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(fds)
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

// waitReady waits for the bridge to answer url with 200, or to exit (a
// config it refused: its log says why).
func waitReady(ctx context.Context, url string, exited <-chan struct{}) error {
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
		case <-exited:
			return errors.New("the bridge exited")
		case <-time.After(100 * time.Millisecond):
		}
	}
	return errors.New("the bridge did not become ready")
}
