package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
)

// errNoRedisServer: `bridge demo --replicas` without --redis needs a
// redis-server binary to start.
var errNoRedisServer = errors.New("redis-server is not installed (on Debian/Ubuntu: apt-get install redis-server); or pass --redis redis://host:port of a Redis to use")

// redisServer is a redis-server child process without persistence, on a
// free loopback port: the demo's store, and the multi-instance tests'.
type redisServer struct {
	URL  string
	cmd  *exec.Cmd
	done chan struct{} // closed once its output is drained
}

// startRedisServer starts redis-server in dir (its working directory) and
// returns once it accepts connections. A port found free can be taken
// before the server binds it, so it tries three ports.
func startRedisServer(ctx context.Context, dir string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errNoRedisServer
	}
	var errs []error
	for range 3 {
		r, err := runRedisServer(ctx, bin, dir)
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func runRedisServer(ctx context.Context, bin, dir string) (*redisServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.CommandContext(ctx, bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	// Redis logs this line once it accepts connections: its log says when
	// it is up, with no polling interval to guess.
	var log strings.Builder
	sc := bufio.NewScanner(out)
	ready := false
	for !ready && sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		ready = strings.Contains(sc.Text(), "Ready to accept connections")
	}
	r := &redisServer{URL: "redis://127.0.0.1:" + port + "/0", cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_, _ = io.Copy(io.Discard, out) // the server blocks on a full pipe
	}()
	if !ready {
		r.Stop()
		return nil, fmt.Errorf("redis-server on port %s stopped before it was ready:\n%s", port, log.String())
	}
	return r, nil
}

// Stop kills the server and waits for it.
func (r *redisServer) Stop() {
	_ = r.cmd.Process.Kill()
	<-r.done
	_ = r.cmd.Wait()
}
