package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestServeRefusesOpenAddress: without auth, serve will not listen on a
// non-loopback address unless auth.mode is none.
func TestServeRefusesOpenAddress(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, extra string) (cfg, db string) {
		dir := t.TempDir()
		cfg, db = filepath.Join(dir, "bridge.yaml"), filepath.Join(dir, "b.db")
		if err := os.WriteFile(cfg, []byte("listen: 0.0.0.0:0\n"+extra+"store: {kind: embedded, path: "+db+
			"}\nagents:\n  - name: x\n    url: http://127.0.0.1:1/\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return cfg, db
	}
	t.Run("no auth", func(t *testing.T) {
		t.Parallel()
		cfg, db := write(t, "")
		var out, errOut bytes.Buffer
		if code := run(t.Context(), []string{"serve", "--config", cfg}, &out, &errOut); code != 2 {
			t.Fatalf("exit %d, want 2: %s", code, errOut.String())
		}
		if !strings.Contains(errOut.String(), "refusing to listen on 0.0.0.0:0 without authentication") {
			t.Errorf("stderr: %s", errOut.String())
		}
		if _, err := os.Stat(db); err == nil {
			t.Error("serve opened its store before refusing")
		}
		// --listen on loopback is fine.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if code := run(ctx, []string{"serve", "--config", cfg, "--listen", "127.0.0.1:0"}, &out, &errOut); code != 0 {
			t.Errorf("loopback: exit %d: %s", code, errOut.String())
		}
	})
	for _, tc := range []struct{ name, extra string }{
		{"mode none", "auth: {mode: none}\n"},
		{"api key", "auth: {apiKeys: [{key: abcdefghijklmnopqrstuvwxyz, principal: ops}]}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, db := write(t, tc.extra)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan int, 1)
			var out, errOut bytes.Buffer
			go func() { done <- run(ctx, []string{"serve", "--config", cfg}, &out, &errOut) }()
			for i := 0; ; i++ {
				if _, err := os.Stat(db); err == nil {
					break
				}
				select {
				case code := <-done:
					t.Fatalf("serve exited %d: %s", code, errOut.String())
				case <-time.After(10 * time.Millisecond):
				}
				if i > 1000 {
					t.Fatal("serve did not start")
				}
			}
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
		})
	}
}
