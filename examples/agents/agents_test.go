package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// transport is one way a client reaches a demo agent.
type transport struct {
	name    string
	binding a2a.TransportProtocol
	v03     bool // use the v0.3 card and the a2av0 JSON-RPC client
}

var transports = []transport{
	{name: "jsonrpc", binding: a2a.TransportProtocolJSONRPC},
	{name: "rest", binding: a2a.TransportProtocolHTTPJSON},
	{name: "grpc", binding: a2a.TransportProtocolGRPC},
	{name: "jsonrpc-v0.3", binding: a2a.TransportProtocolJSONRPC, v03: true},
}

// startServer starts a Server with no delays, closed when t and its parallel subtests are done.
func startServer(t *testing.T) *Server {
	t.Helper()
	srv, err := Start(t.Context(), "127.0.0.1:0", Options{Delay: -1})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv
}

// newClient resolves agent's card the way the bridge does and builds a client
// that can only use tr: the card is cut down to that one interface, so the
// factory cannot silently pick another.
// edits, if any, change the card before the client is built.
func newClient(t *testing.T, srv *Server, agent string, tr transport, edits ...func(*a2a.AgentCard)) *a2aclient.Client {
	t.Helper()
	ctx := t.Context()
	var (
		card *a2a.AgentCard
		err  error
		opts []a2aclient.FactoryOption
	)
	if tr.v03 {
		resolver := &agentcard.Resolver{CardParser: a2av0.NewAgentCardParser()}
		card, err = resolver.Resolve(ctx, srv.URLv03(agent))
		opts = append(opts, a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{}))
	} else {
		card, err = agentcard.DefaultResolver.Resolve(ctx, srv.URL(agent))
		opts = append(opts, a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	if err != nil {
		t.Fatalf("resolve %s card: %v", agent, err)
	}
	var keep []*a2a.AgentInterface
	for _, iface := range card.SupportedInterfaces {
		if iface.ProtocolBinding == tr.binding {
			keep = append(keep, iface)
		}
	}
	if len(keep) != 1 {
		t.Fatalf("%s card has %d %s interfaces, want 1: %+v", agent, len(keep), tr.binding, card.SupportedInterfaces)
	}
	card.SupportedInterfaces = keep
	for _, edit := range edits {
		edit(card)
	}
	client, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		t.Fatalf("client for %s over %s: %v", agent, tr.name, err)
	}
	t.Cleanup(func() { client.Destroy() })
	return client
}

func userMessage(parts ...*a2a.Part) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, parts...)}
}

// collect drains a stream into descriptions, checking that every event belongs
// to the same task and context. It returns the task info of the first event.
func collect(t *testing.T, events func(yield func(a2a.Event, error) bool)) ([]string, a2a.TaskInfo) {
	t.Helper()
	var (
		got  []string
		info a2a.TaskInfo
	)
	for ev, err := range events {
		if err != nil {
			t.Fatalf("stream error after %q: %v", got, err)
		}
		if len(got) == 0 {
			info = ev.TaskInfo()
		} else if ev.TaskInfo() != info {
			t.Errorf("event %d (%s) has task info %+v, want %+v", len(got), describe(ev), ev.TaskInfo(), info)
		}
		got = append(got, describe(ev))
	}
	return got, info
}

// describe renders an event as one line, keeping what the bridge reacts to and
// dropping IDs and timestamps.
func describe(ev a2a.Event) string {
	state := func(s a2a.TaskState) string { return strings.TrimPrefix(string(s), "TASK_STATE_") }
	switch ev := ev.(type) {
	case *a2a.Task:
		return fmt.Sprintf("task %s artifacts=%d", state(ev.Status.State), len(ev.Artifacts))
	case *a2a.Message:
		return fmt.Sprintf("message %s: %s", ev.Role, describeParts(ev.Parts))
	case *a2a.TaskStatusUpdateEvent:
		s := "status " + state(ev.Status.State)
		if m := ev.Status.Message; m != nil {
			s += fmt.Sprintf(" %s: %s", m.Role, describeParts(m.Parts))
		}
		return s
	case *a2a.TaskArtifactUpdateEvent:
		return fmt.Sprintf("artifact %s append=%t last=%t: %s", ev.Artifact.Name, ev.Append, ev.LastChunk, describeParts(ev.Artifact.Parts))
	default:
		return fmt.Sprintf("unexpected %T", ev)
	}
}

func describeParts(parts a2a.ContentParts) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			out[i] = fmt.Sprintf("%q", string(c))
			if len(p.Metadata) > 0 {
				m, err := json.Marshal(p.Metadata)
				if err != nil {
					m = []byte(err.Error())
				}
				out[i] += fmt.Sprintf(" meta%s", m)
			}
		case a2a.Data:
			b, err := json.Marshal(c.Value)
			if err != nil {
				b = []byte(err.Error())
			}
			out[i] = fmt.Sprintf("data[%s] %s", p.MediaType, b)
			if len(p.Metadata) > 0 { // v0.3 unwrapping of non-object data leaves an empty map
				m, err := json.Marshal(p.Metadata)
				if err != nil {
					m = []byte(err.Error())
				}
				out[i] += fmt.Sprintf(" meta%s", m)
			}
		case a2a.URL:
			out[i] = fmt.Sprintf("url[%s %s] %s", p.MediaType, p.Filename, c)
		case a2a.Raw:
			out[i] = fmt.Sprintf("raw[%s %s] %q", p.MediaType, p.Filename, string(c))
		default:
			out[i] = fmt.Sprintf("%T", c)
		}
	}
	return strings.Join(out, " + ")
}

func TestAgentsStream(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const question = "What is A2A?"

	tests := []struct {
		agent string
		want  []string
	}{
		{"streamer", []string{
			"task SUBMITTED artifacts=0",
			"status WORKING",
			`artifact answer append=false last=false: "You said: "`,
			`artifact answer append=true last=false: "What is "`,
			`artifact answer append=true last=false: "A2A. Here "`,
			`artifact answer append=true last=false: "is a "`,
			`artifact answer append=true last=true: "streamed answer."`,
			"status COMPLETED",
		}},
		{"narrator", []string{
			"task SUBMITTED artifacts=0",
			`status WORKING ROLE_AGENT: "Looking into it…"`,
			`status WORKING ROLE_AGENT: "Checking sources…"`,
			`status WORKING ROLE_AGENT: "Writing the answer…"`,
			`artifact answer append=false last=true: "Here is what I found about “What is A2A?”: all sources agree."`,
			"status COMPLETED",
		}},
		{"chatter", []string{
			"task SUBMITTED artifacts=0",
			`status WORKING ROLE_AGENT: "Hel"`,
			`status WORKING ROLE_AGENT: "lo, "`,
			`status WORKING ROLE_AGENT: "world"`,
			`status COMPLETED ROLE_AGENT: "Hello, world"`,
		}},
		{"cumulative", []string{
			"task SUBMITTED artifacts=0",
			`status WORKING ROLE_AGENT: "The"`,
			`status WORKING ROLE_AGENT: "The answer"`,
			`status WORKING ROLE_AGENT: "The answer is 42."`,
			"status COMPLETED",
		}},
		{"repeater", []string{
			"task SUBMITTED artifacts=0",
			`status WORKING ROLE_AGENT: "The capital "`,
			`status WORKING ROLE_AGENT: "of France "`,
			`status WORKING ROLE_AGENT: "is Paris."`,
			`artifact answer append=false last=true: "The capital of France is Paris."`,
			"status COMPLETED",
		}},
		{"replier", []string{
			`message ROLE_AGENT: "Hello! You said: What is A2A?"`,
		}},
		{"failer", []string{
			"task SUBMITTED artifacts=0",
			`status WORKING ROLE_AGENT: "Calling the model…"`,
			`status FAILED ROLE_AGENT: "upstream LLM quota exceeded"`,
		}},
		{"rejecter", []string{
			"task SUBMITTED artifacts=0",
			`status REJECTED ROLE_AGENT: "I only answer questions about travel."`,
		}},
		{"files", []string{
			"task SUBMITTED artifacts=0",
			"status WORKING",
			`artifact rows append=false last=true: data[] {"rows":[1,2,3]}`,
			`artifact report append=false last=true: url[application/pdf report.pdf] https://example.com/report.pdf`,
			`artifact summary append=false last=true: "Here is your report."`,
			"status COMPLETED",
		}},
	}
	for _, tt := range tests {
		for _, tr := range transports {
			t.Run(tt.agent+"/"+tr.name, func(t *testing.T) {
				t.Parallel()
				client := newClient(t, srv, tt.agent, tr)
				got, _ := collect(t, client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart(question))))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestAskerTwoTurns(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	tests := []struct {
		name  string
		reply *a2a.Part
		city  string
	}{
		{name: "data", reply: a2a.NewDataPart(map[string]any{"city": "Paris"}), city: "Paris"},
		{name: "text", reply: a2a.NewTextPart("Lisbon"), city: "Lisbon"},
	}
	for _, tt := range tests {
		for _, tr := range transports {
			t.Run(tt.name+"/"+tr.name, func(t *testing.T) {
				t.Parallel()
				client := newClient(t, srv, "asker", tr)
				schema := `data[application/schema+json] {"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`
				if tr.v03 {
					// v0.3 data parts have no media type; the compat layer drops it.
					schema = `data[] {"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`
				}
				schema += ` meta{"mediaType":"application/schema+json"}`
				first, task := collect(t, client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("What's the weather?"))))
				want := []string{
					"task SUBMITTED artifacts=0",
					"status WORKING",
					`status INPUT_REQUIRED ROLE_AGENT: "Which city should I check?" + ` + schema,
				}
				if diff := cmp.Diff(want, first); diff != "" {
					t.Fatalf("first turn (-want +got):\n%s", diff)
				}

				follow := &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, tt.reply)}
				second, info := collect(t, client.SendStreamingMessage(t.Context(), follow))
				want = []string{
					"status WORKING",
					fmt.Sprintf("artifact weather append=false last=true: %q", WeatherAnswer(tt.city)),
					"status COMPLETED",
				}
				if diff := cmp.Diff(want, second); diff != "" {
					t.Errorf("second turn (-want +got):\n%s", diff)
				}
				if info != task {
					t.Errorf("second turn ran on %+v, want %+v", info, task)
				}
			})
		}
	}
}

func TestBlockingSendMessage(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			client := newClient(t, srv, "blocking", tr)

			res, err := client.SendMessage(ctx, userMessage(a2a.NewTextPart("think hard")))
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			task, ok := res.(*a2a.Task)
			if !ok {
				t.Fatalf("SendMessage returned %T, want *a2a.Task", res)
			}
			if got, want := describe(task), "task COMPLETED artifacts=1"; got != want {
				t.Errorf("result = %q, want %q", got, want)
			}
			if got, want := describeParts(task.Artifacts[0].Parts), fmt.Sprintf("%q", BlockingAnswer); got != want {
				t.Errorf("artifact = %s, want %s", got, want)
			}

			// What a poller sees afterwards.
			polled, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			if polled.Status.State != a2a.TaskStateCompleted || len(polled.Artifacts) != 1 {
				t.Errorf("GetTask = %s, want COMPLETED with 1 artifact", describe(polled))
			}
		})
	}
}

// A client that ignores capabilities.streaming=false is turned away, as by a
// real non-streaming agent.
func TestBlockingRejectsStreaming(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			// Without the edit the client would see streaming=false and fall back to SendMessage.
			client := newClient(t, srv, "blocking", tr, func(c *a2a.AgentCard) { c.Capabilities.Streaming = true })
			var streamErr error
			for _, err := range client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("stream please"))) {
				if err != nil {
					streamErr = err
					break
				}
			}
			if !errors.Is(streamErr, a2a.ErrUnsupportedOperation) {
				t.Errorf("streaming to blocking: err = %v, want ErrUnsupportedOperation", streamErr)
			}
		})
	}
}
