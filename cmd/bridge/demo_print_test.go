package main

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// The console is what most people want to open, so its URL is the demo's
// first line, before any curl command; the second names where the demo's
// A2A agents are, for a config of one's own.
func TestPrintDemoShowsConsoleFirst(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	url := func(name string) string { return "http://127.0.0.1:9001/" + name + "/" }
	printDemo(&b, "http://127.0.0.1:8080", []string{"streamer", "asker"}, url, "/tmp/bridge.db")
	out := b.String()
	first, rest, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "console: http://127.0.0.1:8080/") {
		t.Errorf("first line %q does not give the console's URL", first)
	}
	if i := strings.Index(out, "curl"); i < len(first) {
		t.Errorf("a curl line comes before the console's URL:\n%s", out)
	}
	if second, _, _ := strings.Cut(rest, "\n"); !strings.Contains(second, "at http://127.0.0.1:9001/<name>/ (e.g. http://127.0.0.1:9001/streamer/)") {
		t.Errorf("second line %q does not say where the agents are", second)
	}
	// Everything printed works as pasted: no placeholder, no tool the
	// machine may lack.
	for _, bad := range []string{"INTERRUPT_ID", "websocat", "jq "} {
		if strings.Contains(out, bad) {
			t.Errorf("the demo prints %q:\n%s", bad, out)
		}
	}
}

// syncBuffer is a strings.Builder written by the demo and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDemoResumeWorksAsPasted runs `bridge demo` and pastes its
// human-in-the-loop lines into bash, as a newcomer would: the question,
// the line reading the pending interrupt's id, the resume answering it.
func TestDemoResumeWorksAsPasted(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "grep", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- cmdDemo(ctx, []string{"--listen", "127.0.0.1:0"}, &out, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("demo: %v", err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "Press Ctrl-C") {
		if time.Now().After(deadline) {
			t.Fatalf("the demo printed no instructions:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, after, _ := strings.Cut(out.String(), "then answer it with a resume:\n")
	lines := strings.SplitN(after, "\n", 4)[:3]
	script := strings.Join(lines, "\n")
	if !strings.Contains(lines[1], "ID=$(") || !strings.Contains(lines[2], `"interruptId":"'"$ID"'"`) {
		t.Fatalf("unexpected human-in-the-loop lines:\n%s", script)
	}
	cmd := exec.CommandContext(t.Context(), "bash", "-e", "-c", script)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the pasted lines fail: %v\n%s\n%s", err, script, got)
	}
	if want := agents.WeatherAnswer("Paris"); !strings.Contains(string(got), want) {
		t.Errorf("the resume did not answer the question: no %q in\n%s", want, got)
	}
}
