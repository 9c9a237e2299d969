package server

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// TestUnusableAgentsAreNamedWithURLAndCause: an agent whose card cannot be
// fetched is named, by `bridge check`, by the start-up log and by the log
// of a failed /readyz, with the URL tried and the cause: the HTTP status
// of a card that is not there, the dial error when nothing listens.
func TestUnusableAgentsAreNamedWithURLAndCause(t *testing.T) {
	t.Parallel()
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more

	path := filepath.Join(t.TempDir(), "bridge.yaml")
	yaml := "store: {kind: memory}\nagents:\n" +
		"  - {name: missing, url: " + notFound.URL + "/travel/}\n" +
		"  - {name: dead, url: " + dead + "/}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"missing": {"GET " + notFound.URL + "/travel/.well-known/agent-card.json: HTTP 404 Not Found", "set card:"},
		"dead":    {"GET " + dead + "/.well-known/agent-card.json: dial tcp " + strings.TrimPrefix(dead, "http://"), "connection refused", "is the agent running?"},
	}

	var out bytes.Buffer
	if err := Check(t.Context(), cfg, &out); err == nil {
		t.Fatalf("Check passed with two unusable agents:\n%s", out.String())
	}
	for name, parts := range want {
		line := lineWith(out.String(), name+": ")
		for _, p := range parts {
			if !strings.Contains(line, p) {
				t.Errorf("bridge check says of %s %q, want it to hold %q\n%s", name, line, p, out.String())
			}
		}
	}

	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	b := build(cfg, store.NewMemoryStore(), log, instruments{})
	t.Cleanup(b.closeAgents)
	for _, r := range b.remotes {
		r.logStart(t.Context(), log)
	}
	for name, parts := range want {
		line := lineWith(logged.String(), `level=WARN msg="agent unusable" agent=`+name+" ")
		for _, p := range parts {
			if !strings.Contains(line, p) {
				t.Errorf("start-up log of %s %q, want it to hold %q\n%s", name, line, p, logged.String())
			}
		}
	}

	cat := &catalog{agents: b.remotes, store: b.store, log: log}
	rd := cat.Ready(t.Context())
	for _, a := range rd.Agents {
		for _, p := range want[a.Name] {
			if !strings.Contains(a.Cause, p) {
				t.Errorf("readiness cause of %s = %q, want it to hold %q", a.Name, a.Cause, p)
			}
		}
	}
}

// lineWith is the first line of s that holds sub, or "".
func lineWith(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}
