package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// settings are the driver's flags.
type settings struct {
	mode        string
	runs        int
	chunks      int
	concurrency int
	warmup      int
	ttfe        int
	store       string
	targets     []string
	json        bool
	jsonFile    string
	verbose     bool
	bridgeBin   string
	peerDir     string
	nodeBin     string
	agentKind   string
	startupWait time.Duration

	// streams mode
	streams      int
	interval     time.Duration
	hold         time.Duration
	openParallel int
	rampTimeout  time.Duration
	stallTimeout time.Duration
	endTimeout   time.Duration
}

var allTargets = []string{"limit", "bridge", "peer"}

func parseSettings(args []string, stderr io.Writer) (*settings, error) {
	s := &settings{}
	fs := flag.NewFlagSet("bridge-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: bridge-bench [flags]   (see doc.go or bench/README.md)\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&s.mode, "mode", "chunks", "`chunks`: cost per streamed chunk of each target; streams: many slow streams open at once through the bridge")
	fs.IntVar(&s.runs, "runs", 200, "runs per target in the measured phase")
	fs.IntVar(&s.chunks, "chunks", 500, "A2A artifact chunks per run")
	fs.IntVar(&s.concurrency, "concurrency", 10, "runs in flight at once")
	fs.IntVar(&s.warmup, "warmup", 20, "warm-up runs per target before measuring")
	fs.IntVar(&s.ttfe, "ttfe", 30, "sequential runs for the time to first event")
	fs.StringVar(&s.store, "store", "embedded", "bridge store: `embedded` (a bbolt file in the temp dir) or memory")
	targets := fs.String("targets", strings.Join(allTargets, ","), "comma-separated targets of the chunks mode, measured in this order")
	fs.BoolVar(&s.json, "json", false, "print the report as JSON")
	fs.StringVar(&s.jsonFile, "json-file", "", "also write the JSON report to `file` (the same run as the printed report)")
	fs.BoolVar(&s.verbose, "v", false, "copy the children's stderr to ours")
	fs.StringVar(&s.bridgeBin, "bridge", "", "bridge `binary` to run (default: go build ./cmd/bridge into the temp dir)")
	fs.StringVar(&s.peerDir, "peer-dir", "", "`dir` of the peer service (default: bench/peer in this module)")
	fs.StringVar(&s.nodeBin, "node", "node", "`node` executable for the peer")
	fs.StringVar(&s.agentKind, "agent-handler", "direct", "the agent's request handler: `direct` (streams straight from the executor) or a2asrv (a2asrv's default: task store and manager, O(chunks) per chunk)")
	fs.DurationVar(&s.startupWait, "startup-timeout", 30*time.Second, "how long each child may take to become ready")
	fs.IntVar(&s.streams, "streams", 10000, "streams mode: concurrent runs to open")
	fs.DurationVar(&s.interval, "interval", 5*time.Second, "streams mode: the slow agent's pause between chunks")
	fs.DurationVar(&s.hold, "hold", 20*time.Second, "streams mode: each task stays open at least this long (and until every stream is open)")
	fs.IntVar(&s.openParallel, "open-parallel", 256, "streams mode: requests being opened at once (more would overflow the listen backlog)")
	fs.DurationVar(&s.rampTimeout, "ramp-timeout", 5*time.Minute, "streams mode: give up waiting for every stream to open after this")
	fs.DurationVar(&s.stallTimeout, "stall-timeout", 30*time.Second, "streams mode: take the plateau early when no stream has opened or failed for this long")
	fs.DurationVar(&s.endTimeout, "end-timeout", 3*time.Minute, "streams mode: cut the streams still open this long after the release")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, t := range strings.Split(*targets, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if !slices.Contains(allTargets, t) {
			return nil, fmt.Errorf("-targets: unknown target %q (want some of %s)", t, strings.Join(allTargets, ","))
		}
		s.targets = append(s.targets, t)
	}
	switch {
	case s.mode != "chunks" && s.mode != "streams":
		return nil, fmt.Errorf("-mode must be chunks or streams, not %q", s.mode)
	case s.agentKind != "direct" && s.agentKind != "a2asrv":
		return nil, fmt.Errorf("-agent-handler must be direct or a2asrv, not %q", s.agentKind)
	case s.store != "embedded" && s.store != "memory":
		return nil, fmt.Errorf("-store must be embedded or memory, not %q", s.store)
	case s.runs < 1 || s.chunks < 1 || s.concurrency < 1 || s.streams < 1 || s.openParallel < 1:
		return nil, errors.New("-runs, -chunks, -concurrency, -streams and -open-parallel must be at least 1")
	case s.warmup < 0 || s.ttfe < 0:
		return nil, errors.New("-warmup and -ttfe must not be negative")
	}
	return s, nil
}

// bench runs one invocation: it owns the temp dir and every child.
type bench struct {
	cfg      *settings
	tmp      string
	self     string // this executable, for the agent and limit subcommands
	root     string // the module root (for go build and bench/peer)
	progress io.Writer
	echo     io.Writer // children's stderr copy, or nil

	mu       sync.Mutex
	children []*child
}

// runBench measures what cfg asks for and returns the report. Progress goes
// to progress; the report is the caller's to print.
func runBench(ctx context.Context, cfg *settings, args []string, progress io.Writer) (*report, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "bridge-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	b := &bench{cfg: cfg, tmp: tmp, self: self, progress: progress}
	if cfg.verbose {
		b.echo = progress
	}
	defer b.stopAll()

	nofile, err := raiseNoFile()
	if err != nil {
		fmt.Fprintf(progress, "warning: cannot raise RLIMIT_NOFILE: %v\n", err)
	}
	rep := &report{Header: b.header(args, nofile)}

	needBridge := cfg.mode == "streams" || slices.Contains(cfg.targets, "bridge")
	if needBridge || (cfg.peerDir == "" && slices.Contains(cfg.targets, "peer")) {
		if b.root, err = moduleRoot(ctx); err != nil {
			return nil, err
		}
	}
	if needBridge && cfg.bridgeBin == "" {
		fmt.Fprintln(progress, "building the bridge (go build ./cmd/bridge)")
		cfg.bridgeBin = filepath.Join(tmp, "bridge")
		build := exec.CommandContext(ctx, "go", "build", "-o", cfg.bridgeBin, "./cmd/bridge")
		build.Dir = b.root
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/bridge: %v\n%s", err, out)
		}
	}

	if cfg.mode == "streams" {
		rep.Streams, err = b.streamsMode(ctx)
		return rep, err
	}
	byName := map[string]*targetResult{}
	for _, name := range cfg.targets {
		var (
			res  *targetResult
			skip string
		)
		fmt.Fprintf(progress, "== %s\n", name)
		switch name {
		case "limit":
			res, err = b.limitPhase(ctx)
		case "bridge":
			res, err = b.bridgePhase(ctx)
		case "peer":
			res, skip, err = b.peerPhase(ctx)
		}
		if err != nil {
			return rep, fmt.Errorf("%s: %w", name, err)
		}
		if skip != "" {
			fmt.Fprintf(progress, "%s: skipped (%s)\n", name, skip)
			if rep.Skipped == nil {
				rep.Skipped = map[string]string{}
			}
			rep.Skipped[name] = skip
			continue
		}
		rep.Targets = append(rep.Targets, res)
		byName[name] = res
	}
	if l, br, p := byName["limit"], byName["bridge"], byName["peer"]; br != nil && (l != nil || p != nil) {
		rep.Ratios = &ratios{}
		if l != nil {
			rep.Ratios.BridgeOverLimit = ratio(br.CPUMicrosPerChunk, l.CPUMicrosPerChunk)
		}
		if p != nil {
			rep.Ratios.PeerOverBridge = ratio(p.CPUMicrosPerChunk, br.CPUMicrosPerChunk)
		}
	}
	return rep, nil
}

// start starts a child the bench will stop at the end at the latest.
func (b *bench) start(name, path string, args []string, opts childOptions) (*child, error) {
	if opts.echo == nil {
		opts.echo = b.echo
	}
	c, err := startChild(name, path, args, opts)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.children = append(b.children, c)
	b.mu.Unlock()
	return c, nil
}

// stopAll stops every child still running, newest first.
func (b *bench) stopAll() {
	b.mu.Lock()
	children := slices.Clone(b.children)
	b.mu.Unlock()
	slices.Reverse(children)
	for _, c := range children {
		c.stop()
	}
}

// startAgent starts the bench agent with extra flags and waits for its card.
func (b *bench) startAgent(ctx context.Context, extra ...string) (*child, string, error) {
	args := append([]string{"agent", "-listen", "127.0.0.1:0", "-handler", b.cfg.agentKind, "-chunks", strconv.Itoa(b.cfg.chunks)}, extra...)
	c, err := b.start("agent", b.self, args, childOptions{})
	if err != nil {
		return nil, "", err
	}
	line, err := c.readLine(ctx, b.cfg.startupWait)
	if err != nil {
		return c, "", err
	}
	var st agentStartup
	if err := json.Unmarshal([]byte(line), &st); err != nil {
		return c, "", fmt.Errorf("agent startup line %q: %w", line, err)
	}
	return c, st.URL, waitReady(ctx, c, st.URL+".well-known/agent-card.json", b.cfg.startupWait)
}

var listeningRE = regexp.MustCompile(`msg="bridge listening" addr=(\S+)`)

// startBridge runs `bridge serve` with a generated config in front of the
// agent at agentURL and waits for /readyz. It returns the bridge's base URL.
func (b *bench) startBridge(ctx context.Context, agentURL, name string) (*child, string, error) {
	store := "{kind: memory}"
	if b.cfg.store == "embedded" {
		store = fmt.Sprintf("{kind: embedded, path: %q}", filepath.Join(b.tmp, name+".db"))
	}
	conf := fmt.Sprintf(`# generated by bridge-bench
listen: 127.0.0.1:0
store: %s
server:
  shutdownGrace: 2s
agents:
  - name: bench
    url: %q
`, store, agentURL)
	path := filepath.Join(b.tmp, name+".yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return nil, "", err
	}
	addr := make(chan string, 1)
	c, err := b.start("bridge", b.cfg.bridgeBin, []string{"serve", "--config", path}, childOptions{
		stderrLine: func(line string) {
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		},
	})
	if err != nil {
		return nil, "", err
	}
	timer := time.NewTimer(b.cfg.startupWait)
	defer timer.Stop()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a + "/"
	case <-c.exited:
		return c, "", c.exitError()
	case <-timer.C:
		return c, "", fmt.Errorf("the bridge did not log its address within %s", b.cfg.startupWait)
	case <-ctx.Done():
		return c, "", ctx.Err()
	}
	return c, base, waitReady(ctx, c, base+"readyz", b.cfg.startupWait)
}

// sseClient is the driver's HTTP client for the bridge and the peer: no
// Timeout (streams are long), one idle connection kept per run in flight,
// no limit on connections, no compression to undo.
func sseClient(inFlight int) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext:         dialer.DialContext,
		MaxIdleConns:        inFlight,
		MaxIdleConnsPerHost: inFlight,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}

// sample is the CPU time of the processes of one phase at one instant.
type sample struct {
	target, agent, driver cpu
	agentConns            int64 // connections the agent has seen carry A2A requests
}

func (b *bench) sample(ctx context.Context, target int, agent *child, agentURL string) (sample, error) {
	var s sample
	var err error
	if s.agentConns, err = agentConnections(ctx, agentURL); err != nil {
		return s, err
	}
	if s.target, err = cpuTime(target); err != nil {
		return s, err
	}
	if s.agent, err = cpuTime(agent.pid()); err != nil {
		return s, err
	}
	s.driver, err = cpuTime(os.Getpid())
	return s, err
}

// agentConnections asks the agent how many connections have carried A2A
// requests so far.
func agentConnections(ctx context.Context, agentURL string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, agentURL+"stats", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("agent stats: %w", err)
	}
	defer resp.Body.Close()
	var st agentStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, fmt.Errorf("agent stats: %w", err)
	}
	return st.A2AConnections, nil
}

// fill completes res from the warm-up, the measured phase (before and after
// samples, load result), the TTFE runs and the processes' peak RSS. A failed
// run anywhere is reported, not fatal: it is a finding about the target, and
// the other numbers of a long run are still worth having.
func (b *bench) fill(res *targetResult, warm, load, ttfe loadResult, before, after sample, target, agent int) error {
	res.WarmupFailed = warm.Failed
	if warm.Failed > 0 {
		res.WarmupError = warm.ErrorSample
		fmt.Fprintf(b.progress, "%s: %d of %d warm-up runs failed, first: %s\n", res.Name, warm.Failed, warm.Runs, warm.ErrorSample)
	}
	chunks := int64(b.cfg.runs) * int64(b.cfg.chunks)
	res.Runs, res.Failed, res.ErrorSample = load.Runs, load.Failed, load.ErrorSample
	res.A2AChunks, res.ChunkEvents, res.Events = chunks, load.Chunks, load.Events
	res.EventsPerRun = float64(load.Events) / float64(max(load.Runs, 1))
	res.ChunkEventsPerA2A = float64(load.Chunks) / float64(chunks)
	res.WallSeconds = load.Wall.Seconds()
	res.ChunksPerSecond = float64(load.Chunks) / load.Wall.Seconds()
	res.usage = usageOf(after.target.sub(before.target), chunks)
	res.Agent = usageOf(after.agent.sub(before.agent), chunks)
	res.Driver = usageOf(after.driver.sub(before.driver), chunks)
	res.AgentConnections = after.agentConns - before.agentConns
	res.TTFESamples, res.TTFEFailed = len(ttfe.TTFE), ttfe.Failed
	if len(ttfe.TTFE) > 0 {
		res.TTFEMedianMs = ms(median(ttfe.TTFE))
		res.TTFEMinMs = ms(slices.Min(ttfe.TTFE))
		res.TTFEMaxMs = ms(slices.Max(ttfe.TTFE))
	}
	if res.ErrorSample == "" {
		res.ErrorSample = ttfe.ErrorSample
	}
	st, err := readStatus(target)
	if err != nil {
		return err
	}
	res.PeakRSSKiB = st.PeakRSSKiB
	if st, err = readStatus(agent); err != nil {
		return err
	}
	res.Agent.PeakRSSKiB = st.PeakRSSKiB
	return nil
}

func usageOf(c cpu, chunks int64) usage {
	return usage{
		CPUSeconds:        c.total().Seconds(),
		CPUUserSeconds:    c.user.Seconds(),
		CPUSysSeconds:     c.sys.Seconds(),
		CPUMicrosPerChunk: perChunk(c.total(), chunks),
	}
}

func (b *bench) limitPhase(ctx context.Context) (*targetResult, error) {
	agent, agentURL, err := b.startAgent(ctx)
	if err != nil {
		return nil, err
	}
	defer agent.stop()
	cfg := b.cfg
	lim, err := b.start("limit", b.self, []string{"limit", "-agent", agentURL,
		"-runs", strconv.Itoa(cfg.runs), "-concurrency", strconv.Itoa(cfg.concurrency),
		"-chunks", strconv.Itoa(cfg.chunks), "-warmup", strconv.Itoa(cfg.warmup), "-ttfe", strconv.Itoa(cfg.ttfe),
	}, childOptions{stdin: true})
	if err != nil {
		return nil, err
	}
	defer lim.stop()
	command := func(cmd string) (loadResult, error) {
		if _, err := io.WriteString(lim.stdin, cmd+"\n"); err != nil {
			return loadResult{}, fmt.Errorf("limit %s: %w", cmd, err)
		}
		// A run may take long on a slow machine; the child's exit or
		// Ctrl-C ends the wait earlier.
		line, err := lim.readLine(ctx, time.Hour)
		if err != nil {
			return loadResult{}, err
		}
		var reply limitReply
		if err := json.Unmarshal([]byte(line), &reply); err != nil {
			return loadResult{}, fmt.Errorf("limit reply %q: %w", line, err)
		}
		return reply.Result, nil
	}
	var warm loadResult
	if cfg.warmup > 0 {
		fmt.Fprintf(b.progress, "warm-up: %d runs\n", cfg.warmup)
		if warm, err = command("warmup"); err != nil {
			return nil, err
		}
	}
	before, err := b.sample(ctx, lim.pid(), agent, agentURL)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(b.progress, "measuring: %d runs × %d chunks at concurrency %d\n", cfg.runs, cfg.chunks, cfg.concurrency)
	load, err := command("run")
	if err != nil {
		return nil, err
	}
	after, err := b.sample(ctx, lim.pid(), agent, agentURL)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(b.progress, "time to first event: %d runs\n", cfg.ttfe)
	ttfe, err := command("ttfe")
	if err != nil {
		return nil, err
	}
	res := &targetResult{Name: "limit", Process: "bridge-bench limit: a2a-go a2aclient reading the agent's stream, events discarded"}
	return res, b.fill(res, warm, load, ttfe, before, after, lim.pid(), agent.pid())
}

// ssePhase measures an AG-UI SSE target (the bridge or the peer) whose
// process is proc, in front of agent.
func (b *bench) ssePhase(ctx context.Context, res *targetResult, target *sseTarget, proc, agent *child, agentURL string) error {
	cfg := b.cfg
	var warm loadResult
	if cfg.warmup > 0 {
		fmt.Fprintf(b.progress, "warm-up: %d runs\n", cfg.warmup)
		warm = runLoad(ctx, cfg.warmup, cfg.concurrency, target.run)
	}
	before, err := b.sample(ctx, proc.pid(), agent, agentURL)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.progress, "measuring: %d runs × %d chunks at concurrency %d\n", cfg.runs, cfg.chunks, cfg.concurrency)
	load := runLoad(ctx, cfg.runs, cfg.concurrency, target.run)
	after, err := b.sample(ctx, proc.pid(), agent, agentURL)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fmt.Fprintf(b.progress, "time to first event: %d runs\n", cfg.ttfe)
	ttfe := runSequential(ctx, cfg.ttfe, target.run)
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.fill(res, warm, load, ttfe, before, after, proc.pid(), agent.pid())
}

func (b *bench) bridgePhase(ctx context.Context) (*targetResult, error) {
	agent, agentURL, err := b.startAgent(ctx)
	if err != nil {
		return nil, err
	}
	defer agent.stop()
	bridge, base, err := b.startBridge(ctx, agentURL, "bridge")
	if err != nil {
		return nil, err
	}
	defer bridge.stop()
	client := sseClient(b.cfg.concurrency)
	defer client.CloseIdleConnections()
	target := &sseTarget{url: base + "agents/bench", client: client, classify: classifyBridge, chunks: b.cfg.chunks}
	res := &targetResult{Name: "bridge", Process: fmt.Sprintf("bridge serve (store %s), read by the bench over SSE", b.cfg.store)}
	return res, b.ssePhase(ctx, res, target, bridge, agent, agentURL)
}

// peerStartup is the one JSON line bench/peer/server.mjs prints once it listens.
type peerStartup struct {
	URL string `json:"url"`
}

func (b *bench) peerPhase(ctx context.Context) (*targetResult, string, error) {
	node, err := exec.LookPath(b.cfg.nodeBin)
	if err != nil {
		return nil, "no node", nil
	}
	dir := b.cfg.peerDir
	if dir == "" {
		dir = filepath.Join(b.root, "bench", "peer")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ag-ui", "a2a")); err != nil {
		fmt.Fprintf(b.progress, "installing the peer's packages (npm ci --prefix %s)\n", dir)
		install := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund")
		if out, err := install.CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("npm ci: %v\n%s", err, out)
		}
	}
	agent, agentURL, err := b.startAgent(ctx)
	if err != nil {
		return nil, "", err
	}
	defer agent.stop()
	peer, err := b.start("peer", node, []string{filepath.Join(dir, "server.mjs"), "--agent", agentURL}, childOptions{})
	if err != nil {
		return nil, "", err
	}
	defer peer.stop()
	line, err := peer.readLine(ctx, b.cfg.startupWait)
	if err != nil {
		return nil, "", err
	}
	var st peerStartup
	if err := json.Unmarshal([]byte(line), &st); err != nil {
		return nil, "", fmt.Errorf("peer startup line %q: %w", line, err)
	}
	if err := waitReady(ctx, peer, st.URL+"readyz", b.cfg.startupWait); err != nil {
		return nil, "", err
	}
	client := sseClient(b.cfg.concurrency)
	defer client.CloseIdleConnections()
	target := &sseTarget{url: st.URL + "run", client: client, classify: classifyPeer, chunks: b.cfg.chunks}
	res := &targetResult{Name: "peer", Process: "node: @ag-ui/a2a 0.0.6 A2AAgent.run() per request, events SSE-encoded by @ag-ui/encoder"}
	return res, "", b.ssePhase(ctx, res, target, peer, agent, agentURL)
}

// raiseNoFile lifts the soft RLIMIT_NOFILE to the hard limit, which the
// children inherit: the streams mode holds a connection (two descriptors in
// the bridge) per stream. It returns the limit in force.
func raiseNoFile() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, err
		}
	}
	return lim.Cur, nil
}

// moduleRoot is the directory of this module's go.mod, for go build and
// bench/peer.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run bridge-bench inside the bridge module (go env GOMOD found none)")
	}
	return filepath.Dir(gomod), nil
}

func (b *bench) header(args []string, nofile uint64) header {
	cfg := b.cfg
	h := header{
		Date:       time.Now().UTC().Format(time.RFC3339),
		Command:    commandLine(args),
		Executable: b.self,
		BenchGo:    runtime.Version(),
		NProc:      runtime.NumCPU(),
		NoFile:     nofile,
		Mode:       cfg.mode,
		Store:      cfg.store,
		Agent:      cfg.agentKind,
	}
	if cfg.mode == "chunks" {
		h.Runs, h.Chunks, h.Concurrency, h.Warmup, h.TTFERuns = cfg.runs, cfg.chunks, cfg.concurrency, cfg.warmup, cfg.ttfe
	}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		h.GoVersion = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range bytes.Lines(b) {
			if k, v, ok := bytes.Cut(line, []byte(":")); ok && string(bytes.TrimSpace(k)) == "model name" {
				h.CPUModel = string(bytes.TrimSpace(v))
				break
			}
		}
	}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = "Linux " + strings.TrimSpace(string(rel))
	}
	return h
}

// commandLine renders the invocation as a shell command.
func commandLine(args []string) string {
	parts := []string{"bridge-bench"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
