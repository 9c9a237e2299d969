package main

import (
	"strings"
	"testing"
)

// The console is what most people want to open, so its URL is the demo's
// first line, before any curl command.
func TestPrintDemoShowsConsoleFirst(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printDemo(&b, "http://127.0.0.1:8080", []string{"streamer", "asker"}, "/tmp/bridge.db")
	out := b.String()
	first, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "console: http://127.0.0.1:8080/") {
		t.Errorf("first line %q does not give the console's URL", first)
	}
	if i := strings.Index(out, "curl"); i < len(first) {
		t.Errorf("a curl line comes before the console's URL:\n%s", out)
	}
}
