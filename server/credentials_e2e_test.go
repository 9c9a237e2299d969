package server

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// securedAgent is a real a2asrv agent behind JSON-RPC that answers only
// calls carrying the expected credential (a header, with its value) and
// refuses the rest as unauthenticated, as a protected agent does.
type securedAgent struct {
	*httptest.Server
	header, want string
	mu           sync.Mutex
	seen         []string // the header's values, one per call
}

type echoExecutor struct{}

func (echoExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {
		yield(a2asdk.NewMessageForTask(a2asdk.MessageRoleAgent, ec, a2asdk.NewTextPart("welcome in")), nil)
	}
}

func (echoExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {
		yield(a2asdk.NewStatusUpdateEvent(ec, a2asdk.TaskStateCanceled, nil), nil)
	}
}

func (a *securedAgent) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	got, _ := cc.ServiceParams().Get(strings.ToLower(a.header))
	a.mu.Lock()
	a.seen = append(a.seen, strings.Join(got, ","))
	a.mu.Unlock()
	if len(got) != 1 || got[0] != a.want {
		return ctx, nil, a2asdk.ErrUnauthenticated
	}
	return ctx, nil, nil
}

func (a *securedAgent) After(context.Context, *a2asrv.CallContext, *a2asrv.Response) error {
	return nil
}

func (a *securedAgent) calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string{}, a.seen...)
}

func startSecuredAgent(t *testing.T, header, want string, schemes a2asdk.NamedSecuritySchemes, reqs a2asdk.SecurityRequirementsOptions) *securedAgent {
	t.Helper()
	a := &securedAgent{header: header, want: want}
	h := a2asrv.NewHandler(echoExecutor{}, a2asrv.WithCallInterceptors(a), a2asrv.WithLogger(slog.New(slog.DiscardHandler)))
	mux := http.NewServeMux()
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	card := &a2asdk.AgentCard{
		Name: "secured", Description: "needs a credential", Version: "1.0.0",
		SupportedInterfaces: []*a2asdk.AgentInterface{a2asdk.NewAgentInterface(a.URL+"/a2a", a2asdk.TransportProtocolJSONRPC)},
		Capabilities:        a2asdk.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills:          []a2asdk.AgentSkill{{ID: "s", Name: "s", Description: "s", Tags: []string{"t"}}},
		SecuritySchemes: schemes, SecurityRequirements: reqs,
	}
	mux.Handle("/a2a", a2asrv.NewJSONRPCHandler(h))
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	return a
}

// syncBuffer is a log sink safe for the bridge's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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

// TestCredentialsEndToEnd runs AG-UI runs through the real bridge handler
// to real agents that each demand one kind of credential, with the bridge
// logging everything at debug level, and checks that every credential
// arrived where the card asked, that a wrong one gives 401, and that no
// secret appears in the logs.
func TestCredentialsEndToEnd(t *testing.T) {
	t.Parallel()
	const (
		apiKey       = "key-SECRET-1"
		staticHeader = "static-SECRET-2"
		serviceToken = "svc-SECRET-3"
		callerToken  = "Bearer user-SECRET-4"
		clientSecret = "client-SECRET-6"
		badKey       = "bad-SECRET-7"
	)
	bearer := a2asdk.NamedSecuritySchemes{"bearer": a2asdk.HTTPAuthSecurityScheme{Scheme: "Bearer"}}
	keyed := startSecuredAgent(t, "X-Api-Key", apiKey,
		a2asdk.NamedSecuritySchemes{"key": a2asdk.APIKeySecurityScheme{Location: "header", Name: "X-Api-Key"}},
		a2asdk.SecurityRequirementsOptions{{"key": {}}})
	forwarding := startSecuredAgent(t, "Authorization", callerToken, bearer, a2asdk.SecurityRequirementsOptions{{"bearer": {}}})
	service := startSecuredAgent(t, "Authorization", "Bearer "+serviceToken, bearer, nil)

	var grants sync.Map
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if id != "bridge" || secret != clientSecret {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		grants.Store(time.Now().UnixNano(), true)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"tok-SECRET-5","token_type":"Bearer","expires_in":3600}`)
	}))
	t.Cleanup(tokens.Close)
	oauthAgent := startSecuredAgent(t, "Authorization", "Bearer tok-SECRET-5",
		a2asdk.NamedSecuritySchemes{"oauth": a2asdk.OAuth2SecurityScheme{Flows: a2asdk.ClientCredentialsOAuthFlow{TokenURL: tokens.URL}}},
		a2asdk.SecurityRequirementsOptions{{"oauth": {}}})

	// An agent that takes its key in the query string and then drops the
	// connection: the failure is logged, with the URL the key rode on.
	const queryKey = "query-SECRET-8"
	brokenMux := http.NewServeMux()
	broken := httptest.NewServer(brokenMux)
	t.Cleanup(broken.Close)
	brokenMux.Handle("/a2a", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api_key") != queryKey {
			http.Error(w, "no key", http.StatusForbidden)
			return
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	brokenCard, _ := json.Marshal(&a2asdk.AgentCard{
		Name: "broken", Description: "drops calls", Version: "1.0.0",
		SupportedInterfaces: []*a2asdk.AgentInterface{a2asdk.NewAgentInterface(broken.URL+"/a2a", a2asdk.TransportProtocolJSONRPC)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills:          []a2asdk.AgentSkill{{ID: "s", Name: "s", Description: "s", Tags: []string{"t"}}},
		SecuritySchemes: a2asdk.NamedSecuritySchemes{"key": a2asdk.APIKeySecurityScheme{Location: "query", Name: "api_key"}},
	})
	brokenMux.Handle(a2asrv.WellKnownAgentCardPath, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(brokenCard)
	}))

	cfg := config.Default()
	cfg.Store = config.Store{Kind: config.StoreMemory}
	cfg.Agents = []config.Agent{
		{Name: "keyed", URL: keyed.URL, Headers: map[string]string{"X-Static": staticHeader}, Auth: config.AgentAuth{APIKey: apiKey}},
		{Name: "forwarding", URL: forwarding.URL, Auth: config.AgentAuth{Bearer: serviceToken, ForwardCallerToken: true}},
		{Name: "service", URL: service.URL, Auth: config.AgentAuth{Bearer: serviceToken}},
		{Name: "oauth", URL: oauthAgent.URL, Auth: config.AgentAuth{OAuth2: config.OAuth2{TokenURL: tokens.URL, ClientID: "bridge", ClientSecret: clientSecret}}},
		{Name: "wrong-key", URL: keyed.URL, Auth: config.AgentAuth{APIKey: badKey}},
		{Name: "broken", URL: broken.URL, Headers: map[string]string{"Authorization": "Bearer " + staticHeader}, Auth: config.AgentAuth{APIKey: queryKey}},
	}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mem := store.NewMemoryStore()
	metrics := observe.NewMetrics()
	b := build(cfg, store.Observe(mem, config.StoreMemory, metrics), log, instruments{metrics: metrics})
	srv := httptest.NewServer(b.public)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.svc.Close(ctx)
		b.handler.Shutdown(ctx)
		srv.Close()
		b.closeAgents()
	})

	run := func(agent, thread, authorization string) (int, []agui.Event, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/agents/"+agent,
			bytes.NewReader(runBody(thread, thread+"-r1", false, userMsg(thread+"-m1", "hello"))))
		req.Header.Set("Content-Type", "application/json")
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var raw bytes.Buffer
		_, _ = raw.ReadFrom(resp.Body)
		var evs []agui.Event
		for _, line := range strings.Split(raw.String(), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				ev, err := agui.Decode([]byte(data))
				if err != nil {
					t.Fatalf("frame %q: %v", data, err)
				}
				evs = append(evs, ev)
			}
		}
		return resp.StatusCode, evs, raw.Bytes()
	}
	answered := func(agent, thread, authorization string) {
		t.Helper()
		status, evs, raw := run(agent, thread, authorization)
		if status != http.StatusOK || len(evs) == 0 || evs[len(evs)-1].Type() != agui.EventRunFinished || !strings.Contains(string(raw), "welcome in") {
			t.Fatalf("%s: status %d, want a finished run with the agent's answer:\n%s", agent, status, raw)
		}
	}

	answered("keyed", "t-keyed", "")
	answered("forwarding", "t-fwd", callerToken)
	answered("service", "t-svc", callerToken) // not forwarded: the service token goes
	answered("oauth", "t-oauth", "")
	answered("oauth", "t-oauth-2", "")

	if got := forwarding.calls(); len(got) == 0 || got[len(got)-1] != callerToken {
		t.Errorf("forwarding agent saw %q", got)
	}
	for _, v := range service.calls() {
		if strings.Contains(v, "user-SECRET") {
			t.Errorf("the caller's token reached an agent that does not forward it: %q", v)
		}
	}
	n := 0
	grants.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d token grants for two runs, want 1 (cached)", n)
	}

	// Without the caller's token, the forwarding agent gets the configured
	// one, which it refuses: the client sees 401 before any stream.
	status, _, raw := run("forwarding", "t-fwd-anon", "")
	if status != http.StatusUnauthorized {
		t.Errorf("forwarding without a caller token: status %d: %s", status, raw)
	}
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Error.Code != "a2a_unauthenticated" {
		t.Errorf("error body %s", raw)
	}
	status, _, raw = run("wrong-key", "t-wrong", "")
	if status != http.StatusUnauthorized {
		t.Errorf("wrong key: status %d: %s", status, raw)
	}

	status, _, raw = run("broken", "t-broken", callerToken)
	if status != http.StatusBadGateway {
		t.Errorf("broken agent: status %d: %s", status, raw)
	}

	all := logs.String()
	if !strings.Contains(all, "t-broken") {
		t.Fatalf("the log holds nothing about the runs; the test would prove nothing:\n%s", all)
	}
	for _, secret := range []string{apiKey, staticHeader, serviceToken, "user-SECRET-4", "tok-SECRET-5", clientSecret, badKey, queryKey} {
		if strings.Contains(all, secret) {
			t.Errorf("secret %q appears in the logs", secret)
		}
	}
}

// TestCheckShowsRefusedCards: `bridge check` and GET /agents/{name} say why
// a card was refused (off-host interface, missing signature, size).
func TestCheckShowsRefusedCards(t *testing.T) {
	t.Parallel()
	real := startSecuredAgent(t, "X-None", "", nil, nil)
	mux := http.NewServeMux()
	liar := httptest.NewServer(mux)
	t.Cleanup(liar.Close)
	card, _ := json.Marshal(&a2asdk.AgentCard{
		Name: "liar", Description: "points elsewhere", Version: "1.0.0",
		SupportedInterfaces: []*a2asdk.AgentInterface{a2asdk.NewAgentInterface(real.URL+"/a2a", a2asdk.TransportProtocolJSONRPC)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2asdk.AgentSkill{{ID: "s", Name: "s", Description: "s", Tags: []string{"t"}}},
	})
	mux.Handle(a2asrv.WellKnownAgentCardPath, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(card)
	}))
	dir := t.TempDir()
	key := dir + "/trusted.pem"
	if err := os.WriteFile(key, testPublicPEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	realHost := strings.TrimPrefix(real.URL, "http://")
	cfgPath := dir + "/bridge.yaml"
	yaml := "agents:\n" +
		"  - name: liar\n    url: " + liar.URL + "\n" +
		"  - name: allowed\n    url: " + liar.URL + "\n    trust: {allowHosts: ['" + realHost + "']}\n" +
		"  - name: unsigned\n    url: " + real.URL + "\n    trust: {trustedKeys: [" + key + "]}\n" +
		"  - name: tiny\n    url: " + real.URL + "\n    trust: {maxCardBytes: 64}\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	checked, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Check(context.Background(), checked, &out); err == nil || !strings.Contains(err.Error(), "3 of 4 agents unusable") {
		t.Fatalf("Check: %v\n%s", err, out.String())
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = line
		}
	}
	for name, want := range map[string]string{
		"liar":     "UNUSABLE a2a_card_untrusted: the bridge does not trust the agent: card interface JSONRPC: " + realHost + " is not the agent's host",
		"allowed":  " ok",
		"unsigned": "UNUSABLE a2a_card_untrusted: the bridge does not trust the agent: card is not signed",
		"tiny":     "UNUSABLE a2a_card_untrusted: the bridge does not trust the agent: the card is larger than 64 bytes",
	} {
		if !strings.Contains(rows[name], want) {
			t.Errorf("row %s = %q, want %q", name, rows[name], want)
		}
	}

	// The same reason in the catalog, for a running bridge.
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = config.Store{Kind: config.StoreMemory}
	b := build(cfg, store.NewMemoryStore(), slog.New(slog.DiscardHandler), instruments{})
	srv := httptest.NewServer(b.public)
	t.Cleanup(func() { srv.Close(); b.closeAgents() })
	resp, err := http.Get(srv.URL + "/agents/liar")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Health struct{ Status, Error string } `json:"health"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if info.Health.Status != "unavailable" || !strings.Contains(info.Health.Error, "is not the agent's host") {
		t.Errorf("health = %+v", info.Health)
	}
}

// testPublicPEM is a fresh ECDSA P-256 public key nobody signs cards with.
func testPublicPEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// TestServeRefusesUnloadableKeys: a trusted-key file that exists but holds
// no usable key stops Serve at start, naming the key, rather than leaving
// an agent silently unusable.
func TestServeRefusesUnloadableKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := dir + "/keys.pem"
	if err := os.WriteFile(key, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := dir + "/bridge.yaml"
	if err := os.WriteFile(cfg, []byte("listen: 127.0.0.1:0\nstore: {kind: memory}\nagents:\n  - name: x\n    url: http://127.0.0.1:1/\n    trust: {trustedKeys: ["+key+"]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	loaded, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := Serve(ctx, loaded, slog.New(slog.DiscardHandler), Options{}); err == nil || !strings.Contains(err.Error(), "trust.trustedKeys: trusted key "+key+": holds no public key") {
		t.Fatalf("Serve: %v", err)
	}
}
