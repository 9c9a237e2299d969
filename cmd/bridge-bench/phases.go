package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// loadDriver performs one command of a phase: "warmup" (-warmup runs at
// -concurrency), "run" (the measured phase: -runs runs at -concurrency) or
// "ttfe" (-ttfe runs one at a time). The Go reader runs them in the bench's
// own process; the limit and the HttpAgent reader are child processes that
// take the command on stdin and answer with one JSON line.
type loadDriver func(ctx context.Context, cmd string) (loadResult, error)

// inProcess drives runs of run in the bench itself.
func (b *bench) inProcess(run runFunc) loadDriver {
	cfg := b.cfg
	return func(ctx context.Context, cmd string) (loadResult, error) {
		var res loadResult
		switch cmd {
		case "warmup":
			res = runLoad(ctx, cfg.warmup, cfg.concurrency, run)
		case "run":
			res = runLoad(ctx, cfg.runs, cfg.concurrency, run)
		case "ttfe":
			res = runSequential(ctx, cfg.ttfe, run)
		default:
			return res, fmt.Errorf("unknown command %q", cmd)
		}
		return res, ctx.Err()
	}
}

// commandReply is the JSON line the limit and the HttpAgent reader print
// after each command.
type commandReply struct {
	Command string     `json:"command"`
	Result  loadResult `json:"result"`
}

// childDriver drives a child that takes commands on stdin.
func childDriver(c *child) loadDriver {
	return func(ctx context.Context, cmd string) (loadResult, error) {
		if _, err := io.WriteString(c.stdin, cmd+"\n"); err != nil {
			return loadResult{}, fmt.Errorf("%s %s: %w", c.name, cmd, err)
		}
		// A run may take long on a slow machine; the child's exit or
		// Ctrl-C ends the wait earlier.
		line, err := c.readLine(ctx, time.Hour)
		if err != nil {
			return loadResult{}, err
		}
		var reply commandReply
		if err := json.Unmarshal([]byte(line), &reply); err != nil {
			return loadResult{}, fmt.Errorf("%s reply %.200q: %w", c.name, line, err)
		}
		if reply.Command != cmd {
			return loadResult{}, fmt.Errorf("%s answered %q to %q", c.name, reply.Command, cmd)
		}
		return reply.Result, nil
	}
}

// phaseProcs are the processes of one phase whose counters are read.
type phaseProcs struct {
	target int // the process measured: relay, limit, bridge or node (peer)
	reader int // what reads the target's stream: the bench, the node reader; 0 for the limit (it is its own reader)
	agent  *child
}

// sample is what the processes of one phase have used at one instant.
type sample struct {
	target, agent, driver, reader cpu
	targetIO, agentIO             ioCounts
	agentConns                    int64 // connections the agent has seen carry A2A requests
}

func (b *bench) sample(ctx context.Context, p phaseProcs, agentURL string) (sample, error) {
	var s sample
	var err error
	if s.agentConns, err = agentConnections(ctx, agentURL); err != nil {
		return s, err
	}
	if s.target, err = cpuTime(p.target); err != nil {
		return s, err
	}
	if s.targetIO, err = readIO(p.target); err != nil {
		return s, err
	}
	if s.agent, err = cpuTime(p.agent.pid()); err != nil {
		return s, err
	}
	if s.agentIO, err = readIO(p.agent.pid()); err != nil {
		return s, err
	}
	if p.reader != 0 {
		if s.reader, err = cpuTime(p.reader); err != nil {
			return s, err
		}
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

// measure runs one phase through drive: the warm-up, the measured phase
// between two samples of the processes' counters, then the TTFE runs.
func (b *bench) measure(ctx context.Context, res *targetResult, drive loadDriver, p phaseProcs, agentURL string) error {
	cfg := b.cfg
	var warm loadResult
	var err error
	if cfg.warmup > 0 {
		fmt.Fprintf(b.progress, "warm-up: %d runs\n", cfg.warmup)
		if warm, err = drive(ctx, "warmup"); err != nil {
			return err
		}
	}
	before, err := b.sample(ctx, p, agentURL)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.progress, "measuring: %d runs × %d chunks at concurrency %d, pace %s\n", cfg.runs, cfg.chunks, cfg.concurrency, cfg.pace)
	load, err := drive(ctx, "run")
	if err != nil {
		return err
	}
	after, err := b.sample(ctx, p, agentURL)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.progress, "time to first event: %d runs\n", cfg.ttfe)
	ttfe, err := drive(ctx, "ttfe")
	if err != nil {
		return err
	}
	return b.fill(res, warm, load, ttfe, before, after, p)
}

// fill completes res from the warm-up, the measured phase (before and after
// samples, load result), the TTFE runs and the processes' peak RSS. A failed
// run anywhere is reported, not fatal: it is a finding about the target, and
// the other numbers of a long run are still worth having.
func (b *bench) fill(res *targetResult, warm, load, ttfe loadResult, before, after sample, p phaseProcs) error {
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
	io := after.targetIO.sub(before.targetIO)
	res.ReadSyscalls, res.WriteSyscalls = io.syscr, io.syscw
	res.ReadSyscallsPerChunk = float64(io.syscr) / float64(chunks)
	res.WriteSyscallsPerChunk = float64(io.syscw) / float64(chunks)
	res.Agent = usageOf(after.agent.sub(before.agent), chunks)
	agentIO := after.agentIO.sub(before.agentIO)
	res.AgentReadSyscallsPerChunk = float64(agentIO.syscr) / float64(chunks)
	res.AgentWriteSyscallsPerChunk = float64(agentIO.syscw) / float64(chunks)
	res.Driver = usageOf(after.driver.sub(before.driver), chunks)
	if p.reader != 0 {
		reader := usageOf(after.reader.sub(before.reader), chunks)
		res.Reader = &reader
	}
	res.AgentConnections = after.agentConns - before.agentConns
	res.LatencySamples = len(load.LatencyUs)
	if len(load.LatencyUs) > 0 {
		res.LatencyP50Ms = float64(percentile(load.LatencyUs, 50)) / 1000
		res.LatencyP99Ms = float64(percentile(load.LatencyUs, 99)) / 1000
		res.LatencyMaxMs = float64(percentile(load.LatencyUs, 100)) / 1000
	}
	res.TTFESamples, res.TTFEFailed = len(ttfe.TTFE), ttfe.Failed
	if len(ttfe.TTFE) > 0 {
		res.TTFEMedianMs = ms(median(ttfe.TTFE))
		res.TTFEMinMs = ms(slices.Min(ttfe.TTFE))
		res.TTFEMaxMs = ms(slices.Max(ttfe.TTFE))
	}
	if res.ErrorSample == "" {
		res.ErrorSample = ttfe.ErrorSample
	}
	st, err := readStatus(p.target)
	if err != nil {
		return err
	}
	res.PeakRSSKiB = st.PeakRSSKiB
	if st, err = readStatus(p.agent.pid()); err != nil {
		return err
	}
	res.Agent.PeakRSSKiB = st.PeakRSSKiB
	if p.reader != 0 && p.reader != os.Getpid() {
		if st, err = readStatus(p.reader); err != nil {
			return err
		}
		res.Reader.PeakRSSKiB = st.PeakRSSKiB
	}
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

// phase measures one target with a fresh agent. skip, when not empty, says
// why the target could not be measured here (the peer without node).
func (b *bench) phase(ctx context.Context, name string) (res *targetResult, skip string, err error) {
	if name == "peer" {
		if _, err := exec.LookPath(b.cfg.nodeBin); err != nil {
			return nil, "no node", nil
		}
	}
	agent, agentURL, err := b.startAgent(ctx)
	if err != nil {
		return nil, "", err
	}
	defer agent.stop()
	if name == "limit" {
		res, err := b.limitPhase(ctx, agent, agentURL)
		return res, "", err
	}

	// The other targets are AG-UI or A2A SSE endpoints read by -reader.
	var (
		proc *child
		url  string
		kind string // what the stream is: bridge, peer or a2a
	)
	switch name {
	case "relay":
		proc, url, err = b.startRelay(ctx, agentURL)
		url, kind = url+"jsonrpc", "a2a"
		res = &targetResult{Name: name, Process: "bridge-bench relay: httputil.ReverseProxy (FlushInterval -1) in front of the agent, bytes only"}
	case "bridge":
		proc, url, err = b.startBridge(ctx, agentURL, "bridge")
		url, kind = url+"agents/bench", "bridge"
		res = &targetResult{Name: name, Process: fmt.Sprintf("bridge serve (store %s)", b.cfg.store)}
	case "peer":
		proc, url, err = b.startPeer(ctx, agentURL)
		url, kind = url+"run", "peer"
		res = &targetResult{Name: name, Process: "node: @ag-ui/a2a 0.0.6 A2AAgent.run() per request, events SSE-encoded by @ag-ui/encoder"}
	default:
		return nil, "", fmt.Errorf("unknown target %q", name)
	}
	if proc != nil {
		defer proc.stop()
	}
	if err != nil {
		return nil, "", err
	}
	procs := phaseProcs{target: proc.pid(), agent: agent}
	var drive loadDriver
	if b.cfg.reader == "httpagent" {
		reader, err := b.startReader(ctx, url, kind)
		if err != nil {
			return nil, "", err
		}
		defer reader.stop()
		drive, procs.reader = childDriver(reader), reader.pid()
		res.ReaderProcess = "node: @ag-ui/client 1.0.0 HttpAgent.runAgent(), one agent per run"
		if kind == "a2a" {
			res.ReaderProcess = "node: @ag-ui/client 1.0.0 runHttpRequest + parseSSEStream (HttpAgent's transport) on the A2A stream"
		}
	} else {
		client := sseClient(b.cfg.concurrency)
		defer client.CloseIdleConnections()
		target := &sseTarget{url: url, client: client, chunks: b.cfg.chunks}
		switch kind {
		case "a2a":
			target.classify, target.body, target.a2a = classifyA2A, a2aStreamRequest, true
		case "bridge":
			target.classify, target.body = classifyBridge, runInput
		case "peer":
			target.classify, target.body = classifyPeer, runInput
		}
		drive, procs.reader = b.inProcess(target.run), os.Getpid()
		res.ReaderProcess = "the bench's Go SSE reader"
	}
	return res, "", b.measure(ctx, res, drive, procs, agentURL)
}

func (b *bench) limitPhase(ctx context.Context, agent *child, agentURL string) (*targetResult, error) {
	cfg := b.cfg
	lim, err := b.start("limit", b.self, []string{"limit", "-agent", agentURL,
		"-runs", strconv.Itoa(cfg.runs), "-concurrency", strconv.Itoa(cfg.concurrency),
		"-chunks", strconv.Itoa(cfg.chunks), "-warmup", strconv.Itoa(cfg.warmup), "-ttfe", strconv.Itoa(cfg.ttfe),
	}, childOptions{stdin: true})
	if err != nil {
		return nil, err
	}
	defer lim.stop()
	res := &targetResult{Name: "limit", Process: "bridge-bench limit: a2a-go a2aclient reading the agent's stream, events discarded",
		ReaderProcess: "the limit itself"}
	return res, b.measure(ctx, res, childDriver(lim), phaseProcs{target: lim.pid(), agent: agent}, agentURL)
}

// startupLine is the one JSON line the agents, the relay and the peer print
// once they listen.
type startupLine struct {
	URL string `json:"url"`
}

// startListener starts a child that prints a startupLine and waits until
// readyPath under its URL answers 200. It returns the child's base URL.
func (b *bench) startListener(ctx context.Context, name, path string, args []string, readyPath string) (*child, string, error) {
	c, err := b.start(name, path, args, childOptions{})
	if err != nil {
		return nil, "", err
	}
	line, err := c.readLine(ctx, b.cfg.startupWait)
	if err != nil {
		return c, "", err
	}
	var st startupLine
	if err := json.Unmarshal([]byte(line), &st); err != nil || st.URL == "" {
		return c, "", fmt.Errorf("%s startup line %q: want {\"url\": ...}", name, line)
	}
	return c, st.URL, waitReady(ctx, c, st.URL+readyPath, b.cfg.startupWait)
}

// startRelay starts `bridge-bench relay` in front of the agent. The relay
// answers its readiness probe through the agent (the card).
func (b *bench) startRelay(ctx context.Context, agentURL string) (*child, string, error) {
	return b.startListener(ctx, "relay", b.self, []string{"relay", "-agent", agentURL,
		"-concurrency", strconv.Itoa(b.cfg.concurrency)}, ".well-known/agent-card.json")
}

func (b *bench) startPeer(ctx context.Context, agentURL string) (*child, string, error) {
	dir := b.dir(b.cfg.peerDir, "peer")
	node, err := b.nodePackages(ctx, dir, "@ag-ui/a2a")
	if err != nil {
		return nil, "", err
	}
	return b.startListener(ctx, "peer", node, []string{filepath.Join(dir, "server.mjs"), "--agent", agentURL}, "readyz")
}

// startReader starts the @ag-ui/client reader for one target's url.
func (b *bench) startReader(ctx context.Context, url, kind string) (*child, error) {
	cfg := b.cfg
	dir := b.dir(cfg.readerDir, "aguireader")
	node, err := b.nodePackages(ctx, dir, "@ag-ui/client")
	if err != nil {
		return nil, fmt.Errorf("-reader httpagent: %w", err)
	}
	return b.start("reader", node, []string{filepath.Join(dir, "reader.mjs"), "--url", url, "--kind", kind,
		"--chunks", strconv.Itoa(cfg.chunks), "--runs", strconv.Itoa(cfg.runs), "--concurrency", strconv.Itoa(cfg.concurrency),
		"--warmup", strconv.Itoa(cfg.warmup), "--ttfe", strconv.Itoa(cfg.ttfe),
	}, childOptions{stdin: true})
}

// dir is flagValue, or bench/<name> in this module.
func (b *bench) dir(flagValue, name string) string {
	if flagValue != "" {
		return flagValue
	}
	return filepath.Join(b.root, "bench", name)
}

// nodePackages finds node and makes sure the package in dir is installed
// (npm ci from its lock when node_modules lacks probe). It returns node's path.
func (b *bench) nodePackages(ctx context.Context, dir, probe string) (string, error) {
	node, err := exec.LookPath(b.cfg.nodeBin)
	if err != nil {
		return "", errors.New("needs node (>= 20) on PATH, or -node")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(probe))); err != nil {
		fmt.Fprintf(b.progress, "installing the packages of %s (npm ci --prefix %s)\n", filepath.Base(dir), dir)
		install := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund")
		if out, err := install.CombinedOutput(); err != nil {
			return "", fmt.Errorf("npm ci --prefix %s: %v\n%s", dir, err, out)
		}
	}
	return node, nil
}
