package a2a

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"
)

// requestLog records the raw HTTP requests that reach a path prefix, for
// what the A2A server interceptor cannot see (query strings).
type requestLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

// record serves prefix by stripping it and handing the request to s's own
// routes, remembering each request.
func (l *requestLog) record(s *testServer, prefix string) {
	s.mux.Handle(prefix+"/", http.StripPrefix(prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Clone(r.Context()))
		l.mu.Unlock()
		s.mux.ServeHTTP(w, r)
	})))
}

func (l *requestLog) last() *http.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.reqs) == 0 {
		return nil
	}
	return l.reqs[len(l.reqs)-1]
}

func securedCard(iface *a2asdk.AgentInterface, schemes a2asdk.NamedSecuritySchemes, reqs a2asdk.SecurityRequirementsOptions) *a2asdk.AgentCard {
	c := testCard(iface)
	c.SecuritySchemes, c.SecurityRequirements = schemes, reqs
	return c
}

var (
	bearerScheme = a2asdk.NamedSecuritySchemes{"bearer": a2asdk.HTTPAuthSecurityScheme{Scheme: "Bearer"}}
	bearerReq    = a2asdk.SecurityRequirementsOptions{{"bearer": {}}}
)

// TestCredentialsPlacedByCard: the config gives the secret, the card says
// where it goes; a real a2asrv agent sees it there, and the card fetch never
// carries it.
func TestCredentialsPlacedByCard(t *testing.T) {
	t.Parallel()
	apiKey := func(loc a2asdk.APIKeySecuritySchemeLocation, name string) a2asdk.NamedSecuritySchemes {
		return a2asdk.NamedSecuritySchemes{"key": a2asdk.APIKeySecurityScheme{Location: loc, Name: name}}
	}
	keyReq := a2asdk.SecurityRequirementsOptions{{"key": {}}}
	for _, tc := range []struct {
		name    string
		binding string
		schemes a2asdk.NamedSecuritySchemes
		reqs    a2asdk.SecurityRequirementsOptions
		creds   Credentials
		header  string // header the agent must see, with value
		value   string
		query   string // query parameter the agent must see (HTTP only)
	}{
		{name: "bearer jsonrpc", binding: "jsonrpc", schemes: bearerScheme, reqs: bearerReq, creds: Credentials{Bearer: "s3cret"}, header: "Authorization", value: "Bearer s3cret"},
		{name: "bearer rest", binding: "rest", schemes: bearerScheme, reqs: bearerReq, creds: Credentials{Bearer: "s3cret"}, header: "Authorization", value: "Bearer s3cret"},
		{name: "bearer grpc", binding: "grpc", schemes: bearerScheme, reqs: bearerReq, creds: Credentials{Bearer: "s3cret"}, header: "Authorization", value: "Bearer s3cret"},
		{name: "bearer v0.3", binding: "v03", schemes: bearerScheme, reqs: bearerReq, creds: Credentials{Bearer: "s3cret"}, header: "Authorization", value: "Bearer s3cret"},
		{name: "api key header", binding: "jsonrpc", schemes: apiKey("header", "X-Api-Key"), reqs: keyReq, creds: Credentials{APIKey: "k3y"}, header: "X-Api-Key", value: "k3y"},
		{name: "api key cookie", binding: "jsonrpc", schemes: apiKey("cookie", "session"), reqs: keyReq, creds: Credentials{APIKey: "k3y"}, header: "Cookie", value: "session=k3y"},
		{name: "api key query", binding: "jsonrpc", schemes: apiKey("query", "api_key"), reqs: keyReq, creds: Credentials{APIKey: "k3y"}, query: "api_key"},
		{name: "api key query rest", binding: "rest", schemes: apiKey("query", "api_key"), reqs: keyReq, creds: Credentials{APIKey: "k3y"}, query: "api_key"},
		{name: "schemes without requirements", binding: "jsonrpc", schemes: apiKey("header", "X-Api-Key"), creds: Credentials{APIKey: "k3y"}, header: "X-Api-Key", value: "k3y"},
		{name: "no schemes: bearer in Authorization", binding: "jsonrpc", creds: Credentials{Bearer: "s3cret"}, header: "Authorization", value: "Bearer s3cret"},
		{
			name: "first satisfiable alternative", binding: "jsonrpc",
			schemes: a2asdk.NamedSecuritySchemes{"bearer": a2asdk.HTTPAuthSecurityScheme{Scheme: "Bearer"}, "key": a2asdk.APIKeySecurityScheme{Location: "header", Name: "X-Api-Key"}},
			reqs:    a2asdk.SecurityRequirementsOptions{{"key": {}}, {"bearer": {}}},
			creds:   Credentials{Bearer: "s3cret"}, header: "Authorization", value: "Bearer s3cret",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t)
			var log requestLog
			log.record(s, "/rec")
			iface := s.iface(tc.binding)
			if tc.binding != "grpc" {
				iface.URL = strings.Replace(iface.URL, s.URL, s.URL+"/rec", 1)
			}
			card := securedCard(iface, tc.schemes, tc.reqs)
			agent, err := Dial(t.Context(), Options{Name: "sec", URL: s.serveCard(tc.name, a2asrv.NewStaticAgentCardHandler(card)),
				Credentials: tc.creds, AllowHosts: []string{s.GRPCAddr}})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer agent.Close()
			if h := s.lastCardHeaders(); h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" || h.Get("Cookie") != "" {
				t.Errorf("the card fetch carried a credential: %v", h)
			}
			if _, err := agent.GetTask(t.Context(), "x"); !errors.Is(err, ErrTaskNotFound) {
				t.Fatalf("GetTask: %v", err)
			}
			if tc.header != "" {
				if got := s.rec.get("GetTask", tc.header); !cmp.Equal(got, []string{tc.value}) {
					t.Errorf("%s = %q, want %q", tc.header, got, tc.value)
				}
			}
			if tc.query != "" {
				r := log.last()
				if r == nil {
					t.Fatal("no request reached the agent")
				}
				if got := r.URL.Query().Get(tc.query); got != "k3y" {
					t.Errorf("query %s = %q, want k3y", tc.query, got)
				}
			}
		})
	}
}

// TestCredentialsMismatch: a card asking for what is not configured is a
// clear dial error, not calls that fail with 401 later.
func TestCredentialsMismatch(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	keyOnly := a2asdk.NamedSecuritySchemes{"key": a2asdk.APIKeySecurityScheme{Location: "header", Name: "X-Api-Key"}}
	for _, tc := range []struct {
		name    string
		schemes a2asdk.NamedSecuritySchemes
		reqs    a2asdk.SecurityRequirementsOptions
		creds   Credentials
		want    string
	}{
		{"key needed, bearer given", keyOnly, a2asdk.SecurityRequirementsOptions{{"key": {}}}, Credentials{Bearer: "b"}, `scheme "key" needs auth.apiKey`},
		{"key given, card has no schemes", nil, nil, Credentials{APIKey: "k"}, "declares no apiKey security scheme"},
		{"basic auth", a2asdk.NamedSecuritySchemes{"basic": a2asdk.HTTPAuthSecurityScheme{Scheme: "Basic"}}, nil, Credentials{Bearer: "b"}, `only Bearer is supported`},
		{"undeclared scheme", nil, a2asdk.SecurityRequirementsOptions{{"ghost": {}}}, Credentials{Bearer: "b"}, `not declared in securitySchemes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			card := securedCard(s.iface("jsonrpc"), tc.schemes, tc.reqs)
			_, err := Dial(t.Context(), Options{URL: s.serveCard("mismatch "+tc.name, a2asrv.NewStaticAgentCardHandler(card)), Credentials: tc.creds})
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(Classify(err).Message, tc.want) {
				t.Fatalf("Dial error = %v (%+v), want ErrInvalidOptions saying %q", err, Classify(err), tc.want)
			}
			if strings.Contains(err.Error(), "Bearer b") || strings.Contains(err.Error(), `"k"`) {
				t.Errorf("the error quotes the secret: %v", err)
			}
		})
	}
}

// tokenServer is an OAuth2 token endpoint for the client-credentials
// grant. It hands out tokens from lifetimes in order (seconds), the last
// one repeatedly, and counts grants.
type tokenServer struct {
	*httptest.Server
	mu        sync.Mutex
	grants    int
	lifetimes []int
	scopes    []string
}

func newTokenServer(t *testing.T, lifetimes ...int) *tokenServer {
	ts := &tokenServer{lifetimes: lifetimes}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || !ok || id != "bridge" || secret != "client-s3cret" || r.Form.Get("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		ts.mu.Lock()
		ts.grants++
		n := ts.grants
		life := ts.lifetimes[min(n, len(ts.lifetimes))-1]
		ts.scopes = strings.Fields(r.Form.Get("scope"))
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":%d}`, n, life)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.grants
}

func oauthScheme(tokenURL string) a2asdk.NamedSecuritySchemes {
	return a2asdk.NamedSecuritySchemes{"oauth": a2asdk.OAuth2SecurityScheme{
		Flows: a2asdk.ClientCredentialsOAuthFlow{TokenURL: tokenURL, Scopes: map[string]string{"agent:call": "call"}},
	}}
}

// TestOAuth2ClientCredentials: a token is fetched once, reused while valid,
// and replaced once it is within tokenEarly of its expiry.
func TestOAuth2ClientCredentials(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	// The first token expires in 20 s, inside the 30 s margin (and outside
	// the library's default 10 s one): the next call must fetch a new one.
	// The second lives an hour: it is then reused.
	tokens := newTokenServer(t, 20, 3600)
	card := securedCard(s.iface("jsonrpc"), oauthScheme("https://ignored.invalid/token"), a2asdk.SecurityRequirementsOptions{{"oauth": {"agent:call"}}})
	agent, err := Dial(t.Context(), Options{URL: s.serveCard("oauth", a2asrv.NewStaticAgentCardHandler(card)),
		Credentials: Credentials{OAuth2: &OAuth2{TokenURL: tokens.URL, ClientID: "bridge", ClientSecret: "client-s3cret", Scopes: []string{"agent:call"}}}})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer agent.Close()
	for i, want := range []struct {
		auth   string
		grants int
	}{{"Bearer tok-1", 1}, {"Bearer tok-2", 2}, {"Bearer tok-2", 2}, {"Bearer tok-2", 2}} {
		if _, err := agent.GetTask(t.Context(), "x"); !errors.Is(err, ErrTaskNotFound) {
			t.Fatalf("call %d: GetTask: %v", i, err)
		}
		if got := s.rec.get("GetTask", "Authorization"); !cmp.Equal(got, []string{want.auth}) {
			t.Errorf("call %d: Authorization = %q, want %q", i, got, want.auth)
		}
		if got := tokens.count(); got != want.grants {
			t.Errorf("call %d: %d grants, want %d", i, got, want.grants)
		}
	}
	tokens.mu.Lock()
	scopes := tokens.scopes
	tokens.mu.Unlock()
	if !cmp.Equal(scopes, []string{"agent:call"}) {
		t.Errorf("scopes = %q", scopes)
	}
}

// TestOAuth2TokenURLFromCard: the card's token URL is used when the config
// has none, but only on an allowed host: the client secret goes there.
func TestOAuth2TokenURLFromCard(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	tokens := newTokenServer(t, 3600)
	card := securedCard(s.iface("jsonrpc"), oauthScheme(tokens.URL), a2asdk.SecurityRequirementsOptions{{"oauth": {}}})
	base := s.serveCard("oauth-card", a2asrv.NewStaticAgentCardHandler(card))
	creds := Credentials{OAuth2: &OAuth2{ClientID: "bridge", ClientSecret: "client-s3cret"}}

	_, err := Dial(t.Context(), Options{URL: base, Credentials: creds})
	if err == nil || !strings.Contains(err.Error(), "tokenUrl") || !strings.Contains(err.Error(), "allowHosts") {
		t.Fatalf("Dial with an off-host token URL: %v, want a refusal naming allowHosts", err)
	}
	if tokens.count() != 0 {
		t.Fatal("the client secret was sent to a host nobody allowed")
	}

	u, _ := url.Parse(tokens.URL)
	agent, err := Dial(t.Context(), Options{URL: base, Credentials: creds, AllowHosts: []string{u.Host}})
	if err != nil {
		t.Fatalf("Dial with the token host allowed: %v", err)
	}
	defer agent.Close()
	if _, err := agent.GetTask(t.Context(), "x"); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("GetTask: %v", err)
	}
	if got := s.rec.get("GetTask", "Authorization"); !cmp.Equal(got, []string{"Bearer tok-1"}) {
		t.Errorf("Authorization = %q", got)
	}
}

// TestOAuth2Refused: a token endpoint refusing the client fails the call as
// unauthenticated, without quoting the secret.
func TestOAuth2Refused(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	tokens := newTokenServer(t, 3600)
	card := securedCard(s.iface("jsonrpc"), oauthScheme(""), a2asdk.SecurityRequirementsOptions{{"oauth": {}}})
	agent, err := Dial(t.Context(), Options{URL: s.serveCard("oauth-bad", a2asrv.NewStaticAgentCardHandler(card)),
		Credentials: Credentials{OAuth2: &OAuth2{TokenURL: tokens.URL, ClientID: "bridge", ClientSecret: "wrong-s3cret"}}})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer agent.Close()
	_, err = agent.GetTask(t.Context(), "x")
	if !errors.Is(err, ErrUnauthenticated) || Classify(err).Code != "a2a_unauthenticated" {
		t.Fatalf("GetTask = %v, want ErrUnauthenticated", err)
	}
	if strings.Contains(err.Error(), "wrong-s3cret") {
		t.Errorf("error quotes the secret: %v", err)
	}
}

// TestForwardCallerToken: with forwarding on, the run's caller token goes
// to the agent instead of the configured one; with it off it never does.
func TestForwardCallerToken(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	card := securedCard(s.iface("jsonrpc"), bearerScheme, bearerReq)
	base := s.serveCard("forward", a2asrv.NewStaticAgentCardHandler(card))
	for _, tc := range []struct {
		name    string
		forward bool
		headers map[string]string // static headers instead of auth.bearer
		caller  string
		want    string
	}{
		{"forwarded", true, nil, "Bearer user-1", "Bearer user-1"},
		{"no caller token: configured", true, nil, "", "Bearer service"},
		{"not enabled", false, nil, "Bearer user-1", "Bearer service"},
		{"forwarded over a static header", true, map[string]string{"Authorization": "Bearer static"}, "Bearer user-1", "Bearer user-1"},
		{"static header without a caller token", true, map[string]string{"Authorization": "Bearer static"}, "", "Bearer static"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creds := Credentials{Bearer: "service", ForwardCallerToken: tc.forward}
			if tc.headers != nil {
				creds.Bearer = ""
			}
			agent, err := Dial(t.Context(), Options{URL: base, Headers: tc.headers, Credentials: creds})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer agent.Close()
			ctx := WithCallerAuthorization(t.Context(), tc.caller)
			if _, err := agent.GetTask(ctx, "x"); !errors.Is(err, ErrTaskNotFound) {
				t.Fatalf("GetTask: %v", err)
			}
			if got := s.rec.get("GetTask", "Authorization"); !cmp.Equal(got, []string{tc.want}) {
				t.Errorf("Authorization = %q, want %q", got, tc.want)
			}
			// Streams too: the run's messages go this way.
			for _, err := range agent.SendStreaming(ctx, a2asdk.NewMessage(a2asdk.MessageRoleUser, a2asdk.NewTextPart("hello"))) {
				if err != nil {
					t.Fatalf("SendStreaming: %v", err)
				}
			}
			if got := s.rec.get("SendStreamingMessage", "Authorization"); !cmp.Equal(got, []string{tc.want}) {
				t.Errorf("stream Authorization = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCredentialsFromV03Card: a v0.3 card's type-style schemes and
// "security" list place credentials the same way (the compat parser maps
// them), here an API key in a header and a bearer, OR-ed.
func TestCredentialsFromV03Card(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	card := `{"name":"old","description":"v0.3 agent","version":"1","protocolVersion":"0.3.0",
		"url":"` + s.URL + `/v03","preferredTransport":"JSONRPC",
		"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		"skills":[{"id":"s","name":"s","description":"s","tags":["t"]}],
		"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Api-Key"},"bearer":{"type":"http","scheme":"bearer"}},
		"security":[{"key":[]},{"bearer":[]}]}`
	base := s.serveCard("v03-secured", rawCard(card))
	for _, tc := range []struct {
		creds        Credentials
		header, want string
	}{
		{Credentials{APIKey: "k3y"}, "X-Api-Key", "k3y"},
		{Credentials{Bearer: "s3cret"}, "Authorization", "Bearer s3cret"},
	} {
		agent, err := Dial(t.Context(), Options{URL: base, Credentials: tc.creds})
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		if _, err := agent.GetTask(t.Context(), "x"); !errors.Is(err, ErrTaskNotFound) {
			t.Fatalf("GetTask: %v", err)
		}
		if got := s.rec.get("GetTask", tc.header); !cmp.Equal(got, []string{tc.want}) {
			t.Errorf("%s = %q, want %q", tc.header, got, tc.want)
		}
		agent.Close()
	}
}
