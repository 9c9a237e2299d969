package a2a

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// TestADKReliabilityExtension: with ActivateExtensions naming ADK's
// reliability extension, an agent whose card declares it sees it activated
// on every call (A2A-Extensions: the X-A2A-Extensions header on v0.3 HTTP,
// gRPC metadata), beside an extension the call activates itself; an agent
// whose card does not declare it never sees it; nor does one whose card
// declares it when the option leaves it out (config: adkReliability: off).
func TestADKReliabilityExtension(t *testing.T) {
	t.Parallel()
	const a2ui = "https://a2ui.org/a2a-extension/a2ui/v1.0"
	for _, binding := range []string{"jsonrpc", "rest", "grpc", "v03", "v03rest", "v03grpc"} {
		for _, tc := range []struct {
			name     string
			declared bool
			activate []string
			want     bool
		}{
			{"declared", true, []string{ADKReliabilityExtension}, true},
			{"not declared", false, []string{ADKReliabilityExtension}, false},
			{"declared, turned off", true, nil, false},
		} {
			t.Run(binding+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				s := newTestServer(t)
				card := testCard(s.iface(binding))
				if tc.declared {
					card.Capabilities.Extensions = []a2asdk.AgentExtension{{URI: ADKReliabilityExtension, Description: "ADK"}}
				}
				var h http.Handler = a2asrv.NewStaticAgentCardHandler(card)
				if strings.HasPrefix(binding, "v03") {
					h = a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card))
				}
				agent, err := Dial(ctx, Options{Name: "adk", URL: s.serveCard(binding+tc.name, h),
					AllowHosts: []string{s.GRPCAddr}, ActivateExtensions: tc.activate})
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				t.Cleanup(func() { _ = agent.Close() })
				if _, _, err := collect(t, agent.SendStreaming(WithHeaders(ctx, map[string]string{"A2A-Extensions": a2ui}),
					NewUserMessage("", "", NewTextPart("stream please")))); err != nil {
					t.Fatalf("SendStreaming: %v", err)
				}
				got := extensionsSeen(s.rec.get("SendStreamingMessage", "A2A-Extensions"))
				if !slices.Contains(got, a2ui) {
					t.Errorf("the call's own extension was lost: %q", got)
				}
				if slices.Contains(got, ADKReliabilityExtension) != tc.want {
					t.Errorf("extensions seen %q; ADK's activated: want %v", got, tc.want)
				}
				if _, err := agent.GetTask(ctx, "no-such-task"); err == nil {
					t.Fatal("GetTask of an unknown task succeeded")
				}
				if got := extensionsSeen(s.rec.get("GetTask", "A2A-Extensions")); slices.Contains(got, ADKReliabilityExtension) != tc.want {
					t.Errorf("GetTask: extensions seen %q; ADK's activated: want %v", got, tc.want)
				}
			})
		}
	}
}

// extensionsSeen splits header values into URIs.
func extensionsSeen(vals []string) []string {
	var out []string
	for _, v := range vals {
		for u := range strings.SplitSeq(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				out = append(out, u)
			}
		}
	}
	return out
}
