package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// demoReplicas is `bridge demo --replicas N`: the demo agents in this
// process, a Redis (started here unless redisURL names one) and N `bridge
// serve` child processes on consecutive ports sharing it. They are real
// processes so that a user can kill -9 one and watch another adopt its
// runs.
func demoReplicas(ctx context.Context, stdout io.Writer, log *slog.Logger, listen string, n int, redisURL string) error {
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return exitError{2, fmt.Sprintf("demo --listen %q: %v", listen, err)}
	}
	first, err := strconv.Atoi(portText)
	if err != nil || first < 1 || first+n-1 > 65535 {
		return exitError{2, fmt.Sprintf("demo --listen %q: --replicas needs a numeric port with %d free ports from it", listen, n)}
	}
	// A port already taken would leave an instance dead at start while the
	// walkthrough names it; another bridge on it would even answer for it.
	for i := range n {
		addr := net.JoinHostPort(host, strconv.Itoa(first+i))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return exitError{1, fmt.Sprintf("demo --replicas: %s is not free (%v); give the first of %d free ports with --listen", addr, err, n)}
		}
		l.Close()
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the bridge binary to start the instances: %w", err)
	}
	dir, err := os.MkdirTemp("", "a2a-agui-bridge-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	if redisURL == "" {
		r, err := startRedisServer(ctx, dir)
		if errors.Is(err, errNoRedisServer) {
			return exitError{1, "demo --replicas: " + err.Error()}
		}
		if err != nil {
			return fmt.Errorf("start redis-server: %w", err)
		}
		defer r.Stop()
		redisURL = r.URL
	}
	demo, err := agents.Start(ctx, "127.0.0.1:0", agents.Options{})
	if err != nil {
		return fmt.Errorf("start demo agents: %w", err)
	}
	defer demo.Close()

	cfg := config.Default()
	cfg.Store = config.Store{Kind: config.StoreRedis, URL: redisURL, Lease: config.DefaultStoreLease}
	addDemoAgents(cfg, demo)
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	path := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(path, []byte(replicaConfig(cfg)), 0o600); err != nil {
		return err
	}
	// Loaded here as the instances will load it, so a mistake is reported
	// once rather than by N children.
	if _, err := config.Load(path); err != nil {
		return fmt.Errorf("demo config: %w", err)
	}

	var procs []*replica
	defer func() { stopReplicas(procs, log) }()
	for i := range n {
		addr := net.JoinHostPort(host, strconv.Itoa(first+i))
		cmd := exec.Command(self, "serve", "--config", path, "--listen", addr)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // their logs, interleaved, on the demo's stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start instance %d: %w", i+1, err)
		}
		r := &replica{cmd: cmd, url: "http://" + addr, exited: make(chan struct{})}
		go func() { _ = cmd.Wait(); close(r.exited) }()
		procs = append(procs, r)
	}
	urls := make([]string, n)
	pids := make([]int, n)
	for i, r := range procs {
		if err := r.waitReady(ctx); err != nil {
			return fmt.Errorf("instance %d (%s, pid %d): %w", i+1, r.url, r.cmd.Process.Pid, err)
		}
		urls[i], pids[i] = r.url, r.cmd.Process.Pid
	}
	printReplicas(stdout, urls, pids, redisURL)
	<-ctx.Done()
	return nil
}

// replicaConfig is cfg as the YAML the instances load: only what the demo
// sets, every other key keeps its default.
func replicaConfig(cfg *config.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %q\nstore:\n  kind: redis\n  url: %q\n  lease: %s\nserver:\n  corsOrigins: ['*']\nagents:\n",
		cfg.Listen, cfg.Store.URL, cfg.Store.Lease)
	for _, a := range cfg.Agents {
		fmt.Fprintf(&b, "  - name: %s\n    url: %q\n", a.Name, a.URL)
	}
	if len(cfg.Teams) > 0 {
		b.WriteString("teams:\n")
	}
	for _, t := range cfg.Teams {
		fmt.Fprintf(&b, "  - name: %s\n    description: %q\n    strategy: %s\n    members: [%s]\n", t.Name, t.Description, t.Strategy, strings.Join(t.Members, ", "))
	}
	return b.String()
}

// replica is one `bridge serve` child; exited is closed once it has.
type replica struct {
	cmd    *exec.Cmd
	url    string
	exited chan struct{}
}

// waitReady polls the instance's /readyz until it answers 200, and fails
// at once if the instance exits first.
func (r *replica) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/readyz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-r.exited:
			return fmt.Errorf("exited before it was ready (%v; its log is above)", r.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w", context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stopReplicas sends SIGTERM to every instance still running and waits for
// them (their shutdown grace), killing any that outlives it.
func stopReplicas(procs []*replica, log *slog.Logger) {
	for _, r := range procs {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, r := range procs {
		select {
		case <-r.exited:
		case <-time.After(15 * time.Second):
			log.Warn("instance did not stop; killing it", "pid", r.cmd.Process.Pid)
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	}
}

func printReplicas(w io.Writer, urls []string, pids []int, redisURL string) {
	a, b := urls[0], urls[len(urls)-1]
	fmt.Fprintf(w, "a2a-agui-bridge demo — %d bridge instances sharing one Redis (%s):\n", len(urls), redisURL)
	for i, u := range urls {
		fmt.Fprintf(w, "  instance %d: %s  (pid %d; console %s/)\n", i+1, u, pids[i], u)
	}
	post := "curl -N %s/agents/%s -H 'Content-Type: application/json' -d '{\"threadId\":\"%s\",\"runId\":\"%s\",\"protocolVersion\":\"1.0\",\"messages\":[{\"id\":\"msg-1\",\"role\":\"user\",\"content\":\"Count for me\"}]}'\n"
	fmt.Fprintf(w, "\nA thread moves between instances. Start a ten-second count on the first instance:\n  "+post, a, "counter", "move", "run-1")
	fmt.Fprintf(w, "\nFollow the same run from the last instance, from the start (it replays, then goes on live):\n  curl -N %s/agents/counter/threads/move/events\n", b)
	fmt.Fprintf(w, "\nA second run on the thread is refused by every instance while the first runs (409 thread_busy):\n  "+post, b, "counter", "move", "run-2")
	fmt.Fprintf(w, "\nKill the first instance mid-count; within a lease (15s) another adopts the run and the count finishes\n"+
		"in the stream above, every number once:\n  kill -9 %d\n", pids[0])
	fmt.Fprintf(w, "\nCancel a run from any instance (a new thread, started on the last, cancelled from the first):\n  "+post+
		"  curl -X POST %s/agents/counter/threads/stop/cancel\n", b, "counter", "stop", "run-1", a)
	fmt.Fprintf(w, "\nWho holds a thread, and its task:\n  curl %s/agents/counter/threads/move\n\nPress Ctrl-C to stop all instances.\n", b)
}
