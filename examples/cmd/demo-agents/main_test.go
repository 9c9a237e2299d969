package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

func TestRunPrintsAgentsAndStops(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"--listen", "127.0.0.1:0", "--delay", "-1ms"}, stdoutW, io.Discard)
		stdoutW.CloseWithError(err)
		done <- err
	}()

	line, err := bufio.NewReader(stdoutR).ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading startup line: %v", err)
	}
	var startup struct {
		Agents map[string]struct {
			URL    string `json:"url"`
			URLV03 string `json:"urlV03"`
			GRPC   string `json:"grpc"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(line, &startup); err != nil {
		t.Fatalf("startup line %q: %v", line, err)
	}
	catalog := agents.Agents(agents.Options{})
	if len(startup.Agents) != len(catalog) {
		t.Errorf("startup line lists %d agents, want %d: %s", len(startup.Agents), len(catalog), line)
	}
	for _, a := range catalog {
		if _, ok := startup.Agents[a.Name]; !ok {
			t.Errorf("startup line does not list %s: %s", a.Name, line)
		}
	}
	streamer := startup.Agents["streamer"]
	for _, base := range []string{streamer.URL, streamer.URLV03} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+".well-known/agent-card.json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET card: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s card: %s", base, resp.Status)
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}
