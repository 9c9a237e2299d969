package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/auth"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// TestCheck runs `bridge check` against real demo agents and one that is
// down: one row per agent, and a non-zero exit for the unusable one.
func TestCheck(t *testing.T) {
	t.Parallel()
	demo, err := agents.Start(t.Context(), "127.0.0.1:0", agents.Options{Delay: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Close()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "agents:\n  - name: streamer\n    url: "+demo.URL("streamer")+
		"\n  - name: blocking\n    url: "+demo.URL("blocking")+"\n  - name: old\n    url: "+demo.URLv03("asker")+"\n")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "--config", good}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"streamer", "JSONRPC", "1.0", "true", "blocking", "false", "old", "0.3", "ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
	bad := write("bad.yaml", "agents:\n  - name: streamer\n    url: "+demo.URL("streamer")+"\n  - name: down\n    url: http://127.0.0.1:1/\n")
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"check", "--config", bad}, &out, &errOut); code != 1 ||
		!strings.Contains(out.String(), "UNUSABLE") || !strings.Contains(errOut.String(), "1 of 2 agents unusable") {
		t.Fatalf("exit %d:\n%s\n%s", code, out.String(), errOut.String())
	}
	invalid := write("invalid.yaml", "agents:\n  - name: Bad Name\n    url: ftp://x\n    timeout: 3s\n")
	errOut.Reset()
	if code := run(context.Background(), []string{"check", "--config", invalid}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "agents[0].timeout") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

// TestServeStopsGracefully: serve runs until its context ends, then
// returns without error.
func TestServeStopsGracefully(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errOut := serveUntilStarted(t, dir, "listen: 127.0.0.1:0\nstore: {kind: embedded, path: "+filepath.Join(dir, "b.db")+
		"}\nagents:\n  - name: x\n    url: http://127.0.0.1:1/\n")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"bogus"}, &out, errOut); code != 2 {
		t.Fatalf("unknown command exit %d", code)
	}
}

// serveUntilStarted runs `bridge serve` on yaml (whose store is
// dir/b.db) until it has opened its store, then stops it and checks it
// exits 0. It returns what serve wrote on stderr.
func serveUntilStarted(t *testing.T, dir, yaml string) *bytes.Buffer {
	t.Helper()
	cfg := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var out, errOut bytes.Buffer
	go func() { done <- run(ctx, []string{"serve", "--config", cfg}, &out, &errOut) }()
	// The store file appears once serve has opened it.
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, "b.db")); err == nil {
			break
		}
		if i > 500 {
			t.Fatal("serve did not start")
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, errOut.String())
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	return &errOut
}

// With log.format json, every line bridge serve writes is a JSON object.
func TestServeLogsJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errOut := serveUntilStarted(t, dir, "listen: 127.0.0.1:0\nlog: {format: json, level: info}\nstore: {kind: embedded, path: "+
		filepath.Join(dir, "b.db")+"}\nagents:\n  - name: x\n    url: http://127.0.0.1:1/\n")
	listening := false
	for _, line := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
		if rec["msg"] == "bridge listening" && rec["level"] == "INFO" {
			listening = true
		}
	}
	if !listening {
		t.Errorf("no JSON \"bridge listening\" line in %q", errOut.String())
	}
}

// TestCallerTokenIsNotTheBridgeKey: a run forwards the caller's
// Authorization to agents that ask for it, but never one of the bridge's own
// API keys, which would hand the agent the key to the bridge.
func TestCallerTokenIsNotTheBridgeKey(t *testing.T) {
	authn, err := auth.New(context.Background(), auth.Options{Keys: []auth.Key{{Digest: sha256.Sum256([]byte("bridge-key-0123456789")), Principal: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	forwarded := func(authn *auth.Authenticator, header string) string {
		seen := "unset"
		h := withCallerAuthorization(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = a2a.CallerAuthorization(r.Context())
		}), authn)
		r := httptest.NewRequest("POST", "/agents/a", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		return seen
	}
	for _, c := range []struct{ header, want string }{
		{"Bearer bridge-key-0123456789", ""},
		{"bearer bridge-key-0123456789", ""},
		{"Bearer eyJhbGciOi.a-user-jwt.sig", "Bearer eyJhbGciOi.a-user-jwt.sig"},
		{"Basic dXNlcjpwdw==", "Basic dXNlcjpwdw=="},
		{"", ""},
	} {
		if got := forwarded(authn, c.header); got != c.want {
			t.Errorf("Authorization %q: forwarded %q, want %q", c.header, got, c.want)
		}
	}
	// Without auth there is no bridge key to keep back.
	if got := forwarded(nil, "Bearer bridge-key-0123456789"); got != "Bearer bridge-key-0123456789" {
		t.Errorf("without auth: forwarded %q", got)
	}
}
