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
	agentKind   string // the Go agent's request handler: direct or a2asrv
	startupWait time.Duration

	agent      string        // go (a2asrv) or js (@a2a-js/sdk 1.3.0)
	reader     string        // go (the bench's SSE reader) or httpagent (@ag-ui/client 1.0.0)
	shape      string        // bulk or paced: the defaults of runs, chunks, concurrency and pace
	pace       time.Duration // pause between an agent's chunks; 0: back to back
	jsAgentDir string
	readerDir  string

	// streams mode
	streams      int
	interval     time.Duration
	hold         time.Duration
	openParallel int
	rampTimeout  time.Duration
	stallTimeout time.Duration
	endTimeout   time.Duration
}

var allTargets = []string{"relay", "limit", "bridge", "peer"}

// pacedDefaults are the paced shape's sizes (issue 19): the way LLM tokens
// arrive, one chunk every 20 ms per run, 100 runs in flight.
const (
	pacedChunks      = 100
	pacedConcurrency = 100
	pacedPace        = 20 * time.Millisecond
	// A paced run lasts chunks × pace (2 s); 10 sequential runs give the
	// TTFE median without spending a minute per target on it.
	pacedTTFE = 10
)

func parseSettings(args []string, stderr io.Writer) (*settings, error) {
	s := &settings{}
	fs := flag.NewFlagSet("bridge-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: bridge-bench [flags]   (see doc.go or bench/README.md)\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&s.mode, "mode", "chunks", "`chunks`: cost per streamed chunk of each target; streams: many slow streams open at once through the bridge")
	fs.StringVar(&s.shape, "shape", "bulk", "`bulk`: chunks back to back (200 runs × 500 chunks, 10 in flight); paced: one chunk every -pace per run (200 × 100, 100 in flight, 20ms); -runs, -chunks, -concurrency and -pace override")
	fs.IntVar(&s.runs, "runs", 200, "runs per target in the measured phase")
	fs.IntVar(&s.chunks, "chunks", 500, "A2A artifact chunks per run (paced shape: 100)")
	fs.IntVar(&s.concurrency, "concurrency", 10, "runs in flight at once (paced shape: 100)")
	fs.DurationVar(&s.pace, "pace", 0, "pause between one run's chunks at the agent; 0: back to back (paced shape: 20ms)")
	fs.StringVar(&s.agent, "agent", "go", "the A2A agent: `go` (a2a-go a2asrv, this binary) or js (@a2a-js/sdk 1.3.0, bench/jsagent)")
	fs.StringVar(&s.reader, "reader", "go", "what reads relay, bridge and peer: `go` (the bench's SSE reader) or httpagent (@ag-ui/client 1.0.0, bench/aguireader)")
	fs.StringVar(&s.jsAgentDir, "jsagent-dir", "", "`dir` of the JS agent (default: bench/jsagent in this module)")
	fs.StringVar(&s.readerDir, "reader-dir", "", "`dir` of the HttpAgent reader (default: bench/aguireader in this module)")
	fs.IntVar(&s.warmup, "warmup", 20, "warm-up runs per target before measuring")
	fs.IntVar(&s.ttfe, "ttfe", 30, "sequential runs for the time to first event (paced shape: 10)")
	fs.StringVar(&s.store, "store", "embedded", "bridge store: `embedded` (a bbolt file in the temp dir), memory, or redis (a redis-server from PATH the bench starts: no persistence, on a free port)")
	targets := fs.String("targets", strings.Join(allTargets, ","), "comma-separated targets of the chunks mode, measured in this order")
	fs.BoolVar(&s.json, "json", false, "print the report as JSON")
	fs.StringVar(&s.jsonFile, "json-file", "", "also write the JSON report to `file` (the same run as the printed report)")
	fs.BoolVar(&s.verbose, "v", false, "copy the children's stderr to ours")
	fs.StringVar(&s.bridgeBin, "bridge", "", "bridge `binary` to run (default: go build ./cmd/bridge into the temp dir)")
	fs.StringVar(&s.peerDir, "peer-dir", "", "`dir` of the peer service (default: bench/peer in this module)")
	fs.StringVar(&s.nodeBin, "node", "node", "`node` executable for the peer, the JS agent and the HttpAgent reader")
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
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if s.shape == "paced" {
		if !set["chunks"] {
			s.chunks = pacedChunks
		}
		if !set["concurrency"] {
			s.concurrency = pacedConcurrency
		}
		if !set["pace"] {
			s.pace = pacedPace
		}
		if !set["ttfe"] {
			s.ttfe = pacedTTFE
		}
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
	case s.shape != "bulk" && s.shape != "paced":
		return nil, fmt.Errorf("-shape must be bulk or paced, not %q", s.shape)
	case s.agent != "go" && s.agent != "js":
		return nil, fmt.Errorf("-agent must be go or js, not %q", s.agent)
	case s.reader != "go" && s.reader != "httpagent":
		return nil, fmt.Errorf("-reader must be go or httpagent, not %q", s.reader)
	case s.pace < 0:
		return nil, errors.New("-pace must not be negative")
	case s.mode == "streams" && s.agent != "go":
		return nil, errors.New("-mode streams uses the go agent (it needs its slow-agent flags and POST /release)")
	case s.agentKind != "direct" && s.agentKind != "a2asrv":
		return nil, fmt.Errorf("-agent-handler must be direct or a2asrv, not %q", s.agentKind)
	case s.store != "embedded" && s.store != "memory" && s.store != "redis":
		return nil, fmt.Errorf("-store must be embedded, memory or redis, not %q", s.store)
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
	if needBridge || cfg.peerDir == "" || cfg.jsAgentDir == "" || cfg.readerDir == "" {
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
		res, skip, err = b.phase(ctx, name)
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
	if r, l, br, p := byName["relay"], byName["limit"], byName["bridge"], byName["peer"]; br != nil && (r != nil || l != nil || p != nil) {
		rep.Ratios = &ratios{}
		if r != nil {
			rep.Ratios.BridgeOverRelay = ratio(br.CPUMicrosPerChunk, r.CPUMicrosPerChunk)
			rep.Ratios.BridgeOverRelayLatencyP99 = ratio(br.LatencyP99Ms, r.LatencyP99Ms)
		}
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

// startAgent starts the bench agent (-agent go or js) at -chunks and
// -pace, plus extra flags for the Go agent, and waits for its card.
func (b *bench) startAgent(ctx context.Context, extra ...string) (*child, string, error) {
	var (
		c   *child
		err error
	)
	if b.cfg.agent == "js" {
		dir := b.dir(b.cfg.jsAgentDir, "jsagent")
		node, err := b.nodePackages(ctx, dir, "@a2a-js/sdk")
		if err != nil {
			return nil, "", fmt.Errorf("-agent js: %w", err)
		}
		handler := "direct"
		if b.cfg.agentKind == "a2asrv" {
			handler = "sdk" // the SDK's own default handler, as a2asrv's is for the Go agent
		}
		c, err = b.start("agent", node, []string{filepath.Join(dir, "server.mjs"), "--listen", "127.0.0.1:0",
			"--chunks", strconv.Itoa(b.cfg.chunks), "--pace-ms", strconv.FormatFloat(ms(b.cfg.pace), 'f', -1, 64),
			"--handler", handler}, childOptions{})
		if err != nil {
			return nil, "", err
		}
	} else {
		args := append([]string{"agent", "-listen", "127.0.0.1:0", "-handler", b.cfg.agentKind,
			"-chunks", strconv.Itoa(b.cfg.chunks), "-interval", b.cfg.pace.String()}, extra...)
		if c, err = b.start("agent", b.self, args, childOptions{}); err != nil {
			return nil, "", err
		}
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
	switch b.cfg.store {
	case "embedded":
		store = fmt.Sprintf("{kind: embedded, path: %q}", filepath.Join(b.tmp, name+".db"))
	case "redis":
		url, err := b.startRedis(ctx, name)
		if err != nil {
			return nil, "", fmt.Errorf("-store redis: %w", err)
		}
		store = fmt.Sprintf("{kind: redis, url: %q}", url)
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
		AgentImpl:  cfg.agent,
	}
	if cfg.mode == "chunks" {
		h.Runs, h.Chunks, h.Concurrency, h.Warmup, h.TTFERuns = cfg.runs, cfg.chunks, cfg.concurrency, cfg.warmup, cfg.ttfe
		h.Reader, h.Shape, h.PaceMs = cfg.reader, cfg.shape, ms(cfg.pace)
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

// startRedis starts a redis-server for the bridge named name, without
// persistence (as the Redis store's tests run it: the bench measures the
// bridge, not Redis's disk), and returns its URL once it accepts
// connections. Its CPU is not the bridge's: the report counts the bridge
// process alone.
func (b *bench) startRedis(ctx context.Context, name string) (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server is not on PATH (apt-get install redis-server): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	dir := filepath.Join(b.tmp, name+"-redis")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	c, err := b.start("redis", bin, []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, childOptions{})
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(b.cfg.startupWait)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return "redis://" + addr + "/0", nil
		}
		select {
		case <-c.exited:
			return "", fmt.Errorf("redis-server exited: %v", c.waitErr)
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("redis-server did not accept connections on %s: %w", addr, err)
		}
	}
}
