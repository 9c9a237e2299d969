package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// childEnv marks a process as started by the bench, so that a test binary
// standing in for the bench executable runs the subcommand instead of the
// tests (see TestMain).
const childEnv = "BRIDGE_BENCH_CHILD=1"

// stopGrace is how long a child gets to exit after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// child is a process the bench started. Each one is a separate process so
// that /proc shows its CPU time and memory alone.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser // nil unless asked for

	lines    chan string   // stdout, line by line
	exited   chan struct{} // closed once the process has exited
	waitErr  error         // set before exited is closed
	stopping chan struct{} // closed by stop: readers stop handing out lines
	stopOnce sync.Once
	readers  sync.WaitGroup // the stdout and stderr readers and the waiter

	mu     sync.Mutex
	stderr []string // the last lines of stderr, for error messages
}

type childOptions struct {
	stdin      bool              // give the child a stdin pipe (otherwise /dev/null)
	echo       io.Writer         // when set, stderr is copied here as well
	stderrLine func(line string) // when set, called with each stderr line
}

const stderrTail = 40

// startChild starts path with args in a process group of its own, with
// Pdeathsig so that it dies with the bench even if the bench is killed
// outright (SIGKILL), and with the bench's environment plus childEnv.
func startChild(name, path string, args []string, opts childOptions) (*child, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), childEnv)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Ctrl-C in a terminal reaches the bench only, which then stops
		// the children in order (the bridge before its agent).
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL,
	}
	// Our own pipes rather than cmd.StdoutPipe, so that cmd.Wait does not
	// have to wait for the readers and the waiter can report an exit at once.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	c := &child{
		name:     name,
		cmd:      cmd,
		lines:    make(chan string, 16),
		exited:   make(chan struct{}),
		stopping: make(chan struct{}),
	}
	if opts.stdin {
		if c.stdin, err = cmd.StdinPipe(); err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			return nil, err
		}
	}
	err = cmd.Start()
	outW.Close() // the child has its copies
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c.readers.Go(func() {
		defer outR.Close()
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			select {
			case c.lines <- sc.Text():
			case <-c.stopping:
				return
			}
		}
	})
	c.readers.Go(func() {
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if opts.echo != nil {
				fmt.Fprintf(opts.echo, "[%s] %s\n", name, line)
			}
			if opts.stderrLine != nil {
				opts.stderrLine(line)
			}
			c.mu.Lock()
			if len(c.stderr) == stderrTail {
				c.stderr = c.stderr[1:]
			}
			c.stderr = append(c.stderr, line)
			c.mu.Unlock()
		}
	})
	c.readers.Go(func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	})
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// tail returns the last lines the child wrote to stderr.
func (c *child) tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.stderr, "\n")
}

// exitError describes an unexpected exit, with the end of the child's stderr.
func (c *child) exitError() error {
	msg := fmt.Sprintf("%s exited unexpectedly: %v", c.name, c.waitErr)
	if t := c.tail(); t != "" {
		msg += "\n" + t
	}
	return errors.New(msg)
}

// readLine returns the child's next stdout line.
func (c *child) readLine(ctx context.Context, timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line, ok := <-c.lines:
		if !ok {
			<-c.exited
			return "", c.exitError()
		}
		return line, nil
	case <-c.exited:
		// Lines written just before exiting are still worth reading.
		if line, ok := <-c.lines; ok {
			return line, nil
		}
		return "", c.exitError()
	case <-timer.C:
		return "", fmt.Errorf("%s wrote nothing on stdout for %s", c.name, timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stop ends the child: stdin closed, SIGTERM, SIGKILL after stopGrace,
// then it waits for the readers. Signals go through os.Process, which on
// Linux holds a pidfd, so a stop that races with the child's own exit cannot
// hit a process that has since reused its pid. The children start nothing
// of their own, so the leader is all there is to stop. It is safe to call
// more than once.
func (c *child) stop() {
	c.stopOnce.Do(func() {
		if c.stdin != nil {
			c.stdin.Close()
		}
		select {
		case <-c.exited:
		default:
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
			timer := time.NewTimer(stopGrace)
			select {
			case <-c.exited:
			case <-timer.C:
				_ = c.cmd.Process.Kill()
				<-c.exited
			}
			timer.Stop()
		}
		close(c.stopping)
		c.readers.Wait()
	})
}

// waitReady polls url with GET until it answers 200. It gives up when the
// child exits, ctx ends or timeout passes. Polling, not sleeping: it returns
// as soon as the server is up.
func waitReady(ctx context.Context, c *child, url string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	client := &http.Client{Timeout: time.Second}
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		last = err
		select {
		case <-poll.C:
		case <-c.exited:
			return c.exitError()
		case <-deadline.C:
			return fmt.Errorf("%s not ready at %s after %s: %v", c.name, url, timeout, last)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
