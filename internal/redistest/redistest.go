package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoRedisServer: redis-server is not installed.
var ErrNoRedisServer = errors.New("redis-server is not on PATH: install it with `apt-get install redis-server` (`make test` does)")

// readyTimeout bounds waiting for a deployment to be up.
const readyTimeout = 30 * time.Second

// Server is one redis-server (or Sentinel) process.
type Server struct {
	Addr string // 127.0.0.1:port
	Port int

	cmd      *exec.Cmd
	drained  chan struct{}
	stopOnce sync.Once
	log      *logTail
	// bin, dir and args are what Restart starts again.
	bin, dir string
	args     []string
}

// Start starts redis-server in dir with no persistence and extra
// arguments (a config file first, if any, as redis-server wants it), and
// returns once it logs that it accepts connections. A port found free can
// be taken before the server binds it, so it tries three.
func Start(ctx context.Context, dir string, extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedisServer
	}
	var errs []error
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		s, err := start(ctx, bin, dir, port, extra)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// Restart starts a new redis-server on the port, directory and arguments
// of s, which must have been killed: a Redis restart as clients see it,
// the same address refusing connections and then answering again. The
// new server has what s persisted, which is nothing unless Start was
// given persistence (e.g. "--appendonly", "yes", "--appendfsync",
// "always": every acknowledged write survives a SIGKILL).
func (s *Server) Restart(ctx context.Context) (*Server, error) {
	return start(ctx, s.bin, s.dir, s.Port, s.args)
}

func start(ctx context.Context, bin, dir string, port int, extra []string) (*Server, error) {
	given := extra
	var args []string
	if len(extra) > 0 && !strings.HasPrefix(extra[0], "--") {
		args, extra = append(args, extra[0]), extra[1:] // the config file
	}
	args = append(args, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no")
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, cmd: cmd, drained: make(chan struct{}), log: &logTail{},
		bin: bin, dir: dir, args: given}
	ready := make(chan struct{})
	go func() {
		defer close(s.drained)
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			s.log.add(sc.Text())
			// Redis logs this once it accepts connections (Sentinel too).
			if strings.Contains(sc.Text(), "Ready to accept connections") || strings.Contains(sc.Text(), "Sentinel ID is") {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.drained:
		s.Kill()
		return nil, fmt.Errorf("redis-server on port %d stopped before it was ready:\n%s", port, s.log)
	case <-time.After(readyTimeout):
		s.Kill()
		return nil, fmt.Errorf("redis-server on port %d not ready within %v:\n%s", port, readyTimeout, s.log)
	}
}

// Kill SIGKILLs the server and waits for it; again does nothing.
func (s *Server) Kill() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.drained
		_ = s.cmd.Wait()
	})
}

// Pause stops the server (SIGSTOP) without closing anything: clients'
// connections stay open and their commands go unanswered, as when Redis
// is unreachable behind a partition, until Resume (SIGCONT), when it
// answers what they sent meanwhile.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Log is the server's last log lines.
func (s *Server) Log() string { return s.log.String() }

// Client is a plain client of this one server.
func (s *Server) Client() *redis.Client { return redis.NewClient(&redis.Options{Addr: s.Addr}) }

// logTail keeps a server's last log lines for failure messages.
type logTail struct {
	mu    sync.Mutex
	lines []string
}

func (l *logTail) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if len(l.lines) > 200 {
		l.lines = l.lines[len(l.lines)-200:]
	}
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// Cluster is a Redis Cluster of primaries without replicas.
type Cluster struct{ Nodes []*Server }

// StartCluster starts n cluster-enabled servers, splits the 16,384 slots
// between them (CLUSTER ADDSLOTSRANGE), joins them (CLUSTER MEET) and
// returns once every node reports cluster_state:ok and knows all n.
func StartCluster(ctx context.Context, dir string, n int) (*Cluster, error) {
	c := &Cluster{}
	for i := range n {
		nd := filepath.Join(dir, fmt.Sprintf("node-%d", i))
		if err := os.MkdirAll(nd, 0o755); err != nil {
			c.Stop()
			return nil, err
		}
		s, err := Start(ctx, nd, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000")
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	err := func() error {
		for i, s := range c.Nodes {
			cl := s.Client()
			defer cl.Close()
			lo, hi := i*16384/n, (i+1)*16384/n-1
			if err := cl.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
				return fmt.Errorf("CLUSTER ADDSLOTSRANGE on %s: %w", s.Addr, err)
			}
			if i > 0 {
				if err := cl.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(c.Nodes[0].Port)).Err(); err != nil {
					return fmt.Errorf("CLUSTER MEET from %s: %w", s.Addr, err)
				}
			}
		}
		return until(ctx, func() (bool, error) {
			for _, s := range c.Nodes {
				cl := s.Client()
				info, err := cl.ClusterInfo(ctx).Result()
				cl.Close()
				if err != nil {
					return false, err
				}
				if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)) {
					return false, nil
				}
			}
			return true, nil
		})
	}()
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("form the cluster: %w", err)
	}
	return c, nil
}

// Addrs are the nodes' addresses.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		out[i] = s.Addr
	}
	return out
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Kill()
	}
}

// Sentinel is a primary, its replicas and the Sentinels watching them.
type Sentinel struct {
	Master    string // the name the Sentinels know the primary by
	Primary   *Server
	Replicas  []*Server
	Sentinels []*Server
}

// StartSentinel starts a primary, replicas replicas of it and sentinels
// Sentinels (quorum: a majority) that declare it down after 1 s without an
// answer, and returns once the replicas are in sync and every Sentinel
// knows the replicas and the other Sentinels.
func StartSentinel(ctx context.Context, dir string, replicas, sentinels int) (*Sentinel, error) {
	st := &Sentinel{Master: "bridge-primary"}
	fail := func(err error) (*Sentinel, error) {
		st.Stop()
		return nil, err
	}
	sub := func(name string) (string, error) {
		d := filepath.Join(dir, name)
		return d, os.MkdirAll(d, 0o755)
	}
	d, err := sub("primary")
	if err != nil {
		return fail(err)
	}
	if st.Primary, err = Start(ctx, d); err != nil {
		return fail(err)
	}
	for i := range replicas {
		d, err := sub(fmt.Sprintf("replica-%d", i))
		if err != nil {
			return fail(err)
		}
		r, err := Start(ctx, d, "--replicaof", "127.0.0.1", strconv.Itoa(st.Primary.Port))
		if err != nil {
			return fail(err)
		}
		st.Replicas = append(st.Replicas, r)
	}
	for _, r := range st.Replicas {
		if err := until(ctx, func() (bool, error) {
			cl := r.Client()
			defer cl.Close()
			info, err := cl.Info(ctx, "replication").Result()
			return err == nil && strings.Contains(info, "master_link_status:up"), nil
		}); err != nil {
			return fail(fmt.Errorf("replica %s never synced: %w", r.Addr, err))
		}
	}
	quorum := sentinels/2 + 1
	for i := range sentinels {
		d, err := sub(fmt.Sprintf("sentinel-%d", i))
		if err != nil {
			return fail(err)
		}
		conf := filepath.Join(d, "sentinel.conf")
		text := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d %[3]d\nsentinel down-after-milliseconds %[1]s 1000\n"+
			"sentinel failover-timeout %[1]s 5000\nsentinel parallel-syncs %[1]s 1\n", st.Master, st.Primary.Port, quorum)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return fail(err)
		}
		s, err := Start(ctx, d, conf, "--sentinel")
		if err != nil {
			return fail(err)
		}
		st.Sentinels = append(st.Sentinels, s)
	}
	for _, s := range st.Sentinels {
		if err := until(ctx, func() (bool, error) {
			sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
			defer sc.Close()
			rs, err := sc.Replicas(ctx, st.Master).Result()
			if err != nil {
				return false, nil
			}
			ss, err := sc.Sentinels(ctx, st.Master).Result()
			return err == nil && len(rs) == replicas && len(ss) == sentinels-1, nil
		}); err != nil {
			return fail(fmt.Errorf("Sentinel %s never saw the whole deployment: %w", s.Addr, err))
		}
	}
	return st, nil
}

// SentinelAddrs are the Sentinels' addresses.
func (st *Sentinel) SentinelAddrs() []string {
	out := make([]string, len(st.Sentinels))
	for i, s := range st.Sentinels {
		out[i] = s.Addr
	}
	return out
}

// CurrentPrimary asks the Sentinels which address they hold the primary at.
func (st *Sentinel) CurrentPrimary(ctx context.Context) (string, error) {
	var errs []error
	for _, s := range st.Sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		addr, err := sc.GetMasterAddrByName(ctx, st.Master).Result()
		sc.Close()
		if err == nil && len(addr) == 2 {
			return net.JoinHostPort(addr[0], addr[1]), nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

// Stop kills every process.
func (st *Sentinel) Stop() {
	for _, s := range st.Sentinels {
		s.Kill()
	}
	for _, r := range st.Replicas {
		r.Kill()
	}
	if st.Primary != nil {
		st.Primary.Kill()
	}
}

// until polls done every 20ms until it reports true, fails, or
// readyTimeout passes.
func until(ctx context.Context, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
