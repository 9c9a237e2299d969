package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// Bad --replicas and --listen values are usage errors (exit 2) with a
// message naming the flag, before anything starts.
func TestDemoReplicasFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--replicas", "0"}, "--replicas must be between 1 and 16 (got 0)"},
		{[]string{"demo", "--replicas", "17"}, "--replicas must be between 1 and 16 (got 17)"},
		{[]string{"demo", "--replicas", "2", "--listen", "localhost"}, `demo --listen "localhost"`},
		{[]string{"demo", "--replicas", "2", "--listen", "127.0.0.1:65535"}, "needs a numeric port with 2 free ports"},
	} {
		var out, errOut strings.Builder
		if code := run(t.Context(), tt.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut.String(), tt.want)
		}
	}
}

// TestDemoReplicasPortTaken: a port of the range already taken stops the
// demo before it starts anything, rather than naming a dead instance (or
// another program answering on that port) in the walkthrough.
func TestDemoReplicasPortTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	var out, errOut strings.Builder
	args := []string{"demo", "--replicas", "2", "--listen", fmt.Sprintf("127.0.0.1:%d", port-1)}
	want := "is not free" // port, or port-1 should another program hold it too
	if code := run(t.Context(), args, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("printed a walkthrough anyway:\n%s", out.String())
	}
}

// TestDemoReplicas runs `bridge demo --replicas 2` as a process: it starts
// its own redis-server and two instances, prints their URLs, and a thread
// started on one is followed and cancelled from the other.
func TestDemoReplicas(t *testing.T) {
	t.Parallel()
	bridgeBin, _ := buildBinaries(t)
	var c *child
	var port int
	// A port found free (and the one after it) can be taken by another
	// test's server before the demo binds it, which the demo refuses with
	// "is not free": try other ports.
	for attempt := 0; c == nil; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		c = startChild(t, "demo", bridgeBin, "demo", "--replicas", "2", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
		deadline := time.After(procStartTimeout)
		for c != nil && !strings.Contains(c.stdout.String(), "Press Ctrl-C") {
			select {
			case <-c.done:
				if attempt < 2 && strings.Contains(c.stderr.String(), "is not free") {
					c = nil
					continue
				}
				t.Fatalf("demo exited: %v\n%s", c.err, c.stderr)
			case <-deadline:
				t.Fatalf("demo did not print its walkthrough:\n%s\n%s", c.stdout, c.stderr)
			case <-time.After(pollInterval):
			}
		}
	}
	out := c.stdout.String()
	urls := regexp.MustCompile(`instance \d: (http://\S+)`).FindAllStringSubmatch(out, -1)
	if len(urls) != 2 || urls[0][1] != "http://127.0.0.1:"+strconv.Itoa(port) || urls[1][1] != "http://127.0.0.1:"+strconv.Itoa(port+1) {
		t.Fatalf("instance URLs %v in:\n%s", urls, out)
	}
	if !strings.Contains(out, "redis://127.0.0.1:") || !strings.Contains(out, "kill -9 ") {
		t.Fatalf("the walkthrough lacks the Redis URL or the kill step:\n%s", out)
	}
	a, b := &testBridge{url: urls[0][1]}, &testBridge{url: urls[1][1]}
	lr := a.open(t, "counter", runBody("move", "run-1", true, userMsg("u1", "count")))
	lr.until(t, isContent)
	follow := b.stream(t, http.MethodGet, "/agents/counter/threads/move/events?after=0", nil, http.Header{"Accept": {"text/event-stream"}})
	first := <-follow.frames
	b.cancelThread(t, "counter", "move")
	wantCancelledRun(t, lr.result(t), true)
	events := decodeFrames(t, append([]sseFrame{first}, collectFrames(t, follow)...))
	if err := agui.CheckStream(true, events); err != nil {
		t.Fatalf("the run followed on the second instance: %v", err)
	}
	if text := (runResult{events: events}).text(); !strings.HasPrefix(agents.CounterText(100), text) || text == "" {
		t.Fatalf("the followed text %q is not the counter's", text)
	}
	// Ctrl-C stops the instances and the Redis it started.
	ctx, cancel := context.WithTimeout(t.Context(), procExitTimeout)
	defer cancel()
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-ctx.Done():
		t.Fatal("demo did not stop on SIGINT")
	}
}
