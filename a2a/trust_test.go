package a2a

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

func wantUntrusted(t *testing.T, err error, says string) {
	t.Helper()
	if !errors.Is(err, ErrCardUntrusted) {
		t.Fatalf("err = %v, want ErrCardUntrusted", err)
	}
	info := Classify(err)
	if info.Code != "a2a_card_untrusted" || info.HTTPStatus != http.StatusBadGateway || !strings.Contains(info.Message, says) {
		t.Fatalf("Classify = %+v, want a2a_card_untrusted saying %q", info, says)
	}
}

// TestCardOffHost: a card's interfaces must stay on the configured agent's
// origin unless allowHosts names their host.
func TestCardOffHost(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	other := newTestServer(t) // a real agent, on another port
	otherHost := strings.TrimPrefix(other.URL, "http://")
	card := testCard(other.iface("jsonrpc"))
	base := s.serveCard("offhost", a2asrv.NewStaticAgentCardHandler(card))

	_, err := Dial(t.Context(), Options{Name: "off", URL: base})
	wantUntrusted(t, err, otherHost+" is not the agent's host")

	for _, allow := range []string{otherHost, "127.0.0.1", "LOCALHOST", "127.0.0.1:1"} {
		agent, err := Dial(t.Context(), Options{Name: "off", URL: base, AllowHosts: []string{allow}})
		switch allow {
		case "LOCALHOST", "127.0.0.1:1":
			// Another host, another port: still refused.
			wantUntrusted(t, err, "allowHosts")
			continue
		}
		if err != nil {
			t.Fatalf("allowHosts %q: Dial: %v", allow, err)
		}
		if _, err := agent.GetTask(t.Context(), "x"); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("allowHosts %q: GetTask: %v", allow, err)
		}
		agent.Close()
	}

	// Same host and port, other scheme: a downgrade is another origin.
	https := testCard(&a2asdk.AgentInterface{URL: strings.Replace(s.URL, "http://", "https://", 1) + "/jsonrpc", ProtocolBinding: a2asdk.TransportProtocolJSONRPC, ProtocolVersion: "1.0"})
	_, err = Dial(t.Context(), Options{URL: s.serveCard("scheme", a2asrv.NewStaticAgentCardHandler(https))})
	wantUntrusted(t, err, "is not the agent's host")

	// A v0.3 card's url is checked the same way.
	v03 := `{"name":"x","description":"x","version":"1","protocolVersion":"0.3.0","url":"` + other.URL + `/v03","preferredTransport":"JSONRPC",
		"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`
	_, err = Dial(t.Context(), Options{URL: s.serveCard("v03-offhost", rawCard(v03))})
	wantUntrusted(t, err, otherHost)

	// gRPC runs on a listener of its own: another port of the agent's host
	// is fine, another host is not.
	agent, err := Dial(t.Context(), Options{URL: s.serveCard("grpc-port", a2asrv.NewStaticAgentCardHandler(testCard(s.iface("grpc"))))})
	if err != nil {
		t.Fatalf("gRPC on another port of the agent's host: %v", err)
	}
	agent.Close()
	_, port, _ := strings.Cut(s.GRPCAddr, ":")
	elsewhere := testCard(&a2asdk.AgentInterface{URL: "localhost:" + port, ProtocolBinding: a2asdk.TransportProtocolGRPC, ProtocolVersion: "1.0"})
	_, err = Dial(t.Context(), Options{URL: s.serveCard("grpc-offhost", a2asrv.NewStaticAgentCardHandler(elsewhere))})
	wantUntrusted(t, err, "card interface GRPC: localhost:"+port)
}

// TestRedirects: a card redirect to another host is not followed; one on
// the same host is.
func TestRedirects(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	other := newTestServer(t)
	otherBase := other.serveCard("target", a2asrv.NewStaticAgentCardHandler(testCard(other.iface("jsonrpc"))))
	s.mux.Handle("/away/.well-known/agent-card.json", http.RedirectHandler(otherBase+"/.well-known/agent-card.json", http.StatusFound))
	sameBase := s.serveCard("same", a2asrv.NewStaticAgentCardHandler(testCard(s.iface("jsonrpc"))))
	s.mux.Handle("/moved/.well-known/agent-card.json", http.RedirectHandler(sameBase+"/.well-known/agent-card.json", http.StatusMovedPermanently))

	_, err := Dial(t.Context(), Options{URL: s.URL + "/away"})
	wantUntrusted(t, err, "redirect refused")
	if other.lastCardHeaders() != nil {
		t.Error("the other host was contacted")
	}

	agent, err := Dial(t.Context(), Options{URL: s.URL + "/moved"})
	if err != nil {
		t.Fatalf("same-host redirect: %v", err)
	}
	agent.Close()

	// A call answered with a redirect off the host is not followed either.
	s.mux.Handle("/bounce", http.RedirectHandler(other.URL+"/jsonrpc", http.StatusTemporaryRedirect))
	bounce := testCard(&a2asdk.AgentInterface{URL: s.URL + "/bounce", ProtocolBinding: a2asdk.TransportProtocolJSONRPC, ProtocolVersion: "1.0"})
	agent, err = Dial(t.Context(), Options{URL: s.serveCard("bounce", a2asrv.NewStaticAgentCardHandler(bounce))})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer agent.Close()
	_, err = agent.GetTask(t.Context(), "x")
	if err == nil || !strings.Contains(err.Error(), "redirect refused") {
		t.Fatalf("GetTask through an off-host redirect: %v", err)
	}
	if other.rec.get("GetTask", "A2A-Version") != nil {
		t.Error("the call reached the other host")
	}
}

// TestCardSizeLimit: a card above the limit is refused as such, not as a
// parse error of its prefix.
func TestCardSizeLimit(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	card := testCard(s.iface("jsonrpc"))
	card.Description = strings.Repeat("x", DefaultMaxCardBytes)
	_, err := Dial(t.Context(), Options{URL: s.serveCard("huge", a2asrv.NewStaticAgentCardHandler(card))})
	wantUntrusted(t, err, "larger than 1048576 bytes")

	small := s.serveCard("small", a2asrv.NewStaticAgentCardHandler(testCard(s.iface("jsonrpc"))))
	_, err = Dial(t.Context(), Options{URL: small, MaxCardBytes: 100})
	wantUntrusted(t, err, "larger than 100 bytes")
	agent, err := Dial(t.Context(), Options{URL: small, MaxCardBytes: 4096})
	if err != nil {
		t.Fatalf("Dial under the limit: %v", err)
	}
	agent.Close()

	// The resolver's re-checks honour the limit too.
	r := NewResolver(Options{URL: small, MaxCardBytes: 100})
	if _, err := r.Agent(t.Context()); !errors.Is(err, ErrCardUntrusted) {
		t.Fatalf("Resolver: %v", err)
	}
	if h := r.Health(); h.Status != "unavailable" || !strings.Contains(h.Error, "larger than 100 bytes") {
		t.Errorf("health = %+v", h)
	}
}

func TestAllowHostsOption(t *testing.T) {
	t.Parallel()
	_, err := Dial(t.Context(), Options{URL: "http://a", AllowHosts: []string{"http://b/"}})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("err = %v", err)
	}
	u, _ := url.Parse("http://[::1]:8080/x")
	g, err := newHostGuard(Options{URL: "http://a", AllowHosts: []string{"[::1]:8080"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.checkHTTP(u.String()); err != nil {
		t.Errorf("IPv6 allow: %v", err)
	}
	b, _ := json.Marshal(g.allow)
	if len(g.allow) != 1 || g.allow[0].host != "::1" || g.allow[0].port != "8080" {
		t.Errorf("parsed %s", b)
	}
}
