package agents

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/google/go-cmp/cmp"
)

// extensionAgents declare extensions in their cards: the bridge's, or A2UI.
var extensionAgents = map[string][]string{"dashboard": {ExtensionURI}, "thinker": {ExtensionURI}, "painter": {ExtensionURI},
	"booker": {A2UIv08URI}, "monitor": {A2UIv09URI}, "wizard": {A2UIv09URI}, "planner": {A2UIv10URI}}

func TestCards(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	if got := srv.Names(); len(got) != len(Agents(Options{})) {
		t.Fatalf("Names() = %v, want %d agents", got, len(Agents(Options{})))
	}
	parsers := []struct {
		name   string
		parser agentcard.Parser
	}{
		{"default", agentcard.DefaultCardParser},
		{"a2av0", a2av0.NewAgentCardParser()},
	}
	type iface struct{ URL, Binding, Version string }
	for _, name := range srv.Names() {
		base := srv.URL(name)
		wantV1 := []iface{
			{base + "jsonrpc", "JSONRPC", "1.0"},
			{base + "rest", "HTTP+JSON", "1.0"},
			{srv.GRPCAddr(name), "GRPC", "1.0"},
		}
		wantV03 := []iface{{srv.URLv03(name) + "jsonrpc", "JSONRPC", "0.3"}}
		for _, p := range parsers {
			for _, c := range []struct {
				url  string
				want []iface
			}{{srv.URL(name), wantV1}, {srv.URLv03(name), wantV03}} {
				t.Run(name+"/"+p.name+"/"+c.url, func(t *testing.T) {
					t.Parallel()
					resolver := &agentcard.Resolver{CardParser: p.parser}
					card, err := resolver.Resolve(t.Context(), c.url)
					if err != nil {
						t.Fatalf("Resolve: %v", err)
					}
					var got []iface
					for _, i := range card.SupportedInterfaces {
						got = append(got, iface{i.URL, string(i.ProtocolBinding), string(i.ProtocolVersion)})
					}
					if diff := cmp.Diff(c.want, got); diff != "" {
						t.Errorf("interfaces (-want +got):\n%s", diff)
					}
					if card.Name != name || card.Description == "" || card.Version == "" {
						t.Errorf("name/description/version = %q/%q/%q", card.Name, card.Description, card.Version)
					}
					if card.Capabilities.Streaming != (name != "blocking") {
						t.Errorf("capabilities.streaming = %t", card.Capabilities.Streaming)
					}
					var exts []string
					for _, e := range card.Capabilities.Extensions {
						exts = append(exts, e.URI)
					}
					wantExts := extensionAgents[name]
					if !slices.Equal(exts, wantExts) {
						t.Errorf("capabilities.extensions = %v, want %v", exts, wantExts)
					}
					if len(card.Skills) != 1 || card.Skills[0].ID == "" || len(card.Skills[0].Tags) == 0 {
						t.Errorf("skills = %+v", card.Skills)
					}
					if !slices.Equal(card.DefaultInputModes, []string{"text/plain"}) || !slices.Equal(card.DefaultOutputModes, []string{"text/plain"}) {
						t.Errorf("modes = %v / %v", card.DefaultInputModes, card.DefaultOutputModes)
					}
				})
			}
		}
	}
}

// An old client reads only the v0.3 fields of the card.
func TestV03CardHasLegacyFields(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URLv03("streamer")+".well-known/agent-card.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var legacy struct {
		URL                string `json:"url"`
		PreferredTransport string `json:"preferredTransport"`
		ProtocolVersion    string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(body, &legacy); err != nil {
		t.Fatalf("card %s: %v", body, err)
	}
	want := srv.URLv03("streamer") + "jsonrpc"
	if legacy.URL != want || legacy.PreferredTransport != "JSONRPC" || legacy.ProtocolVersion != "0.3" {
		t.Errorf("legacy fields = %+v, want url %s, JSONRPC, 0.3", legacy, want)
	}
}

func TestURLsOfUnknownAgent(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	if u, u03, g := srv.URL("nope"), srv.URLv03("nope"), srv.GRPCAddr("nope"); u != "" || u03 != "" || g != "" {
		t.Errorf("URL/URLv03/GRPCAddr(nope) = %q %q %q, want empty", u, u03, g)
	}
}

// The slow agent runs until CancelTask; the stream then ends with CANCELED.
func TestSlowCancel(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			client := newClient(t, srv, "slow", tr)

			type cancelResult struct {
				task *a2a.Task
				err  error
			}
			canceled := make(chan cancelResult, 1)
			var got []string
			var taskID a2a.TaskID
			for ev, err := range client.SendStreamingMessage(ctx, userMessage(a2a.NewTextPart("take your time"))) {
				if err != nil {
					t.Fatalf("stream error after %q: %v", got, err)
				}
				got = append(got, describe(ev))
				if task, ok := ev.(*a2a.Task); ok {
					taskID = task.ID
				}
				// Cancel after the first tick, from another goroutine: events
				// fan out synchronously, so the stream must keep being read.
				if len(got) == 3 {
					go func() {
						task, err := client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: taskID})
						canceled <- cancelResult{task, err}
					}()
				}
			}
			res := <-canceled
			if res.err != nil {
				t.Fatalf("CancelTask: %v", res.err)
			}
			if res.task.Status.State != a2a.TaskStateCanceled {
				t.Errorf("CancelTask returned %s, want CANCELED", describe(res.task))
			}
			if len(got) < 4 || got[0] != "task SUBMITTED artifacts=0" || got[len(got)-1] != "status CANCELED" {
				t.Fatalf("events = %q, want task SUBMITTED, WORKING…, status CANCELED", got)
			}
			for _, ev := range got[1 : len(got)-1] {
				if ev != "status WORKING" {
					t.Errorf("event %q between start and cancel, want only status WORKING", ev)
				}
			}
		})
	}
}

// Close ends running slow tasks with FAILED instead of waiting for them.
func TestCloseEndsSlowTasks(t *testing.T) {
	t.Parallel()
	srv, err := Start(t.Context(), "127.0.0.1:0", Options{Delay: -1})
	if err != nil {
		t.Fatal(err)
	}
	client := newClient(t, srv, "slow", transports[0])
	closed := make(chan error, 1)
	var got []string
	for ev, err := range client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("wait"))) {
		if err != nil {
			t.Fatalf("stream error after %q: %v", got, err)
		}
		got = append(got, describe(ev))
		if len(got) == 2 {
			go func() { closed <- srv.Close() }()
		}
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if last := got[len(got)-1]; last != `status FAILED ROLE_AGENT: "agent is shutting down"` {
		t.Errorf("last event = %q, want FAILED on shutdown", last)
	}
}

// The default pause is real: a streamed answer takes at least five delays.
func TestDelayIsReal(t *testing.T) {
	t.Parallel()
	const delay = 20 * time.Millisecond
	srv, err := Start(t.Context(), "127.0.0.1:0", Options{Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client := newClient(t, srv, "streamer", transports[0])
	start := time.Now()
	got, _ := collect(t, client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("hi"))))
	if elapsed := time.Since(start); elapsed < 5*delay {
		t.Errorf("stream took %v, want at least %v", elapsed, 5*delay)
	}
	if len(got) != 8 {
		t.Errorf("got %d events, want 8: %q", len(got), got)
	}
}

func TestOptionsDelay(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want time.Duration }{
		{0, DefaultDelay},
		{-1, 0},
		{5 * time.Millisecond, 5 * time.Millisecond},
	} {
		if got := (Options{Delay: tt.in}).delay(); got != tt.want {
			t.Errorf("Options{Delay: %v}.delay() = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestStartBadAddress(t *testing.T) {
	t.Parallel()
	if srv, err := Start(t.Context(), "127.0.0.1:notaport", Options{}); err == nil {
		srv.Close()
		t.Fatal("Start with a bad address succeeded")
	}
}
