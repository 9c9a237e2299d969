package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/gorilla/websocket"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
)

const (
	aliceKey = "alice-key-0123456789"
	bobKey   = "bob-key-0123456789ab"
	badKey   = "not-a-key-0123456789"
)

// jwtIssuer signs tokens with a key whose public half is in a JWKS file.
type jwtIssuer struct {
	key  *ecdsa.PrivateKey
	jwks string
}

func newJWTIssuer(t *testing.T) *jwtIssuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return &jwtIssuer{key: k, jwks: path}
}

func (i *jwtIssuer) token(t *testing.T, c jwt.Claims) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: i.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withAuth configures alice and bob by API key (bob's as its digest),
// JWTs from iss, and an allow list that leaves alice out of failer.
func withAuth(iss *jwtIssuer) func(*config.Config) {
	return func(c *config.Config) {
		d := sha256.Sum256([]byte(bobKey))
		c.Auth.APIKeys = []config.APIKey{{Key: aliceKey, Principal: "alice"}, {SHA256: hex.EncodeToString(d[:]), Principal: "bob"}}
		if iss != nil {
			c.Auth.JWT = config.JWT{JWKS: iss.jwks, Issuer: "https://idp.test", Audience: "bridge"}
		}
		for i := range c.Agents {
			if c.Agents[i].Name == "failer" {
				c.Agents[i].Allow = []string{"bob"}
			}
		}
	}
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with the bearer token key ("" for none).
func (b *testBridge) do(t *testing.T, method, path, key string, body []byte, header ...string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, b.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: raw}
}

func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not the JSON error body: %s", body)
	}
	return e.Error.Code
}

func agentNames(t *testing.T, body []byte) []string {
	t.Helper()
	var list struct {
		Agents []struct{ Name string } `json:"agents"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range list.Agents {
		names = append(names, a.Name)
	}
	return names
}

// TestAuthAndIsolation is the auth/isolation table: every route, as the
// thread's owner, another principal, an anonymous caller and a bad key.
// Another principal's thread answers exactly as a thread that does not
// exist, byte for byte. (Another principal's runs on the id start a
// thread of their own: TestThreadsPerPrincipal.)
func TestAuthAndIsolation(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) {
		withAuth(nil)(c)
		c.Server.CORSOrigins = []string{"https://app.test"}
	})
	const thread = "th-owned"

	// Browsers send no credentials on a CORS preflight: it is answered
	// before authentication, and allows the Authorization header.
	pre := b.do(t, http.MethodOptions, "/agents/asker", "", nil,
		"Origin", "https://app.test", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type")
	if pre.status != http.StatusNoContent || !strings.Contains(pre.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", pre.status, pre.header)
	}
	base := "/agents/asker/threads/" + thread

	// The answers for the thread before it exists: what anyone else must
	// get once alice owns it.
	missing := b.do(t, http.MethodGet, base, aliceKey, nil)
	if missing.status != http.StatusNotFound || errorCode(t, missing.body) != "unknown_thread" {
		t.Fatalf("missing thread: %d %s", missing.status, missing.body)
	}
	missingCancel := b.do(t, http.MethodPost, base+"/cancel", aliceKey, nil)
	missingEvents := b.do(t, http.MethodGet, base+"/events", aliceKey, nil, "Accept", "application/json")
	for _, r := range []reply{missingCancel, missingEvents} {
		if r.status != http.StatusNotFound || !bytes.Equal(r.body, missing.body) {
			t.Fatalf("missing thread: %d %s, want the snapshot's 404", r.status, r.body)
		}
	}

	// Alice creates the thread: asker asks which city, leaving an interrupt.
	first := b.do(t, http.MethodPost, "/agents/asker", aliceKey, runBody(thread, "run-1", true, userMsg("u1", "weather?")))
	if first.status != http.StatusOK {
		t.Fatalf("alice's first run: %d %s", first.status, first.body)
	}
	var snap struct {
		PendingInterrupts []struct{ ID string } `json:"pendingInterrupts"`
	}
	own := b.do(t, http.MethodGet, base, aliceKey, nil)
	if own.status != http.StatusOK {
		t.Fatalf("owner snapshot: %d %s", own.status, own.body)
	}
	if err := json.Unmarshal(own.body, &snap); err != nil || len(snap.PendingInterrupts) != 1 {
		t.Fatalf("snapshot %s: want one pending interrupt", own.body)
	}
	resume := resumeBody(thread, "run-2", snap.PendingInterrupts[0].ID, `{"city":"Paris"}`, userMsg("u1", "weather?"))
	rerun := runBody(thread, "run-x", true, userMsg("u1", "weather?"), userMsg("u2", "again"))

	type route struct {
		name, method, path string
		body               []byte
		header             []string
		owner              int // the owner's status
		// run: another principal's request is a run of a thread of its
		// own, not a look at alice's; it is left to TestThreadsPerPrincipal.
		run bool
	}
	routes := []route{
		{"snapshot", http.MethodGet, base, nil, nil, http.StatusOK, false},
		{"events", http.MethodGet, base + "/events", nil, []string{"Accept", "application/json"}, http.StatusOK, false},
		{"events SSE", http.MethodGet, base + "/events", nil, nil, http.StatusOK, false},
		// A run without the resume is refused in-band (RUN_ERROR), which
		// leaves the thread as it was.
		{"run", http.MethodPost, "/agents/asker", rerun, nil, http.StatusOK, true},
		{"resume", http.MethodPost, "/agents/asker", resume, nil, http.StatusOK, true},
		{"cancel", http.MethodPost, base + "/cancel", nil, nil, http.StatusOK, false},
	}
	callers := []struct {
		name, key string
	}{{"other", bobKey}, {"anonymous", ""}, {"bad key", badKey}}
	// Everyone else first: none of them may change the thread.
	for _, rt := range routes {
		for _, c := range callers {
			if rt.run && c.key == bobKey {
				continue
			}
			r := b.do(t, rt.method, rt.path, c.key, rt.body, rt.header...)
			switch c.key {
			case bobKey:
				if r.status != http.StatusNotFound || !bytes.Equal(r.body, missing.body) {
					t.Errorf("%s as %s: %d %s; want the missing thread's 404 %s", rt.name, c.name, r.status, r.body, missing.body)
				}
			default:
				if r.status != http.StatusUnauthorized || errorCode(t, r.body) != "unauthenticated" ||
					!strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s as %s: %d %v %s; want 401 with WWW-Authenticate: Bearer", rt.name, c.name, r.status, r.header, r.body)
				}
			}
		}
	}
	if again := b.do(t, http.MethodGet, base, aliceKey, nil); !bytes.Equal(again.body, own.body) {
		t.Fatalf("the others changed alice's thread:\n%s\n%s", own.body, again.body)
	}
	for _, rt := range routes {
		r := b.do(t, rt.method, rt.path, aliceKey, rt.body, rt.header...)
		if r.status != rt.owner {
			t.Errorf("%s as owner: %d %s; want %d", rt.name, r.status, r.body, rt.owner)
		}
		if rt.name == "resume" && !bytes.Contains(r.body, []byte("Paris")) {
			t.Errorf("the owner's resume did not reach the agent: %s", r.body)
		}
	}

	// WebSocket: the upgrade needs credentials; a subscribe to another's
	// thread is answered as for a thread that does not exist.
	for _, c := range callers[1:] {
		h := http.Header{}
		if c.key != "" {
			h.Set("Authorization", "Bearer "+c.key)
		}
		_, resp, err := b.dialWS(t, "asker", h)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("WS upgrade as %s: %v %+v; want 401", c.name, err, resp)
		}
	}
	wsCode := func(key, threadID string) (string, string) {
		c, _, err := b.dialWS(t, "asker", http.Header{"Authorization": {"Bearer " + key}})
		if err != nil {
			t.Fatal(err)
		}
		c.send(t, map[string]any{"type": "subscribe", "threadId": threadID, "after": 0})
		env := c.next(t)
		var e agui.RunError
		if err := json.Unmarshal(env.Event, &e); err != nil {
			t.Fatal(err)
		}
		return e.Code, e.Message
	}
	missingCode, missingMsg := wsCode(bobKey, "th-never")
	if missingCode != "unknown_thread" {
		t.Fatalf("WS subscribe to a missing thread: %s", missingCode)
	}
	if code, msg := wsCode(bobKey, thread); code != missingCode || msg != strings.Replace(missingMsg, "th-never", thread, 1) {
		t.Errorf("WS subscribe to another's thread: %s %q; want %s %q", code, msg, missingCode, missingMsg)
	}
	// The console's way: the token as a subprotocol, which is echoed.
	d := websocket.Dialer{Subprotocols: []string{"agui-bridge", "bearer." + aliceKey}}
	conn, resp, err := d.DialContext(t.Context(), "ws"+strings.TrimPrefix(b.url, "http")+"/agents/asker/ws", nil)
	if err != nil {
		t.Fatalf("WS with a bearer subprotocol: %v %+v", err, resp)
	}
	if got := conn.Subprotocol(); got != "agui-bridge" {
		t.Errorf("subprotocol %q, want agui-bridge", got)
	}
	if err := conn.WriteJSON(map[string]any{"type": "subscribe", "threadId": thread, "after": 0}); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	var env envelope
	if err := conn.ReadJSON(&env); err != nil || env.Seq != 1 {
		t.Errorf("alice's subscribe over the subprotocol: %+v %v; want her journal", env, err)
	}
	conn.Close()

	// Discovery: alice does not see failer and gets 403 on it; bob does.
	aliceList := b.do(t, http.MethodGet, "/agents", aliceKey, nil)
	bobList := b.do(t, http.MethodGet, "/agents", bobKey, nil)
	if aliceList.status != 200 || bobList.status != 200 {
		t.Fatalf("GET /agents: %d, %d", aliceList.status, bobList.status)
	}
	if names := agentNames(t, aliceList.body); slices.Contains(names, "failer") || !slices.Contains(names, "asker") {
		t.Errorf("alice sees %v", names)
	}
	if names := agentNames(t, bobList.body); !slices.Contains(names, "failer") {
		t.Errorf("bob sees %v", names)
	}
	for _, tc := range []struct {
		name, method, path, key string
		body                    []byte
		status                  int
	}{
		{"agent", http.MethodGet, "/agents/asker", aliceKey, nil, 200},
		{"agent, not allowed", http.MethodGet, "/agents/failer", aliceKey, nil, 403},
		{"agent, allowed", http.MethodGet, "/agents/failer", bobKey, nil, 200},
		{"run, not allowed", http.MethodPost, "/agents/failer", aliceKey, runBody("th-f", "r", false, userMsg("u", "x")), 403},
		{"agent, anonymous", http.MethodGet, "/agents/asker", "", nil, 401},
		{"agent, bad key", http.MethodGet, "/agents/asker", badKey, nil, 401},
		{"agents, anonymous", http.MethodGet, "/agents", "", nil, 401},
		{"agents, bad key", http.MethodGet, "/agents", badKey, nil, 401},
		{"metrics", http.MethodGet, "/metrics", aliceKey, nil, 200},
		{"metrics, anonymous", http.MethodGet, "/metrics", "", nil, 401},
		{"metrics, bad key", http.MethodGet, "/metrics", badKey, nil, 401},
		{"healthz, anonymous", http.MethodGet, "/healthz", "", nil, 200},
		{"healthz, bad key", http.MethodGet, "/healthz", badKey, nil, 200},
		{"readyz, anonymous", http.MethodGet, "/readyz", "", nil, 200},
		{"readyz, bad key", http.MethodGet, "/readyz", badKey, nil, 200},
		{"console, anonymous", http.MethodGet, "/", "", nil, 200},
		{"unknown route, anonymous", http.MethodGet, "/nope", "", nil, 401},
	} {
		r := b.do(t, tc.method, tc.path, tc.key, tc.body)
		if r.status != tc.status {
			t.Errorf("%s: %d %s; want %d", tc.name, r.status, r.body, tc.status)
			continue
		}
		if tc.status == 403 && errorCode(t, r.body) != "forbidden" {
			t.Errorf("%s: %s", tc.name, r.body)
		}
	}
}

// TestAuthJWT: a JWT from the configured issuer authenticates its sub; a
// forged, expired or misdirected one does not.
func TestAuthJWT(t *testing.T) {
	t.Parallel()
	iss := newJWTIssuer(t)
	b := startBridge(t, withAuth(iss))
	now := time.Now()
	good := jwt.Claims{Subject: "carol", Issuer: "https://idp.test", Audience: jwt.Audience{"bridge"},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now)}
	with := func(f func(*jwt.Claims)) jwt.Claims { c := good; f(&c); return c }
	forger := newJWTIssuer(t)
	for _, tc := range []struct {
		name   string
		token  string
		status int
	}{
		{"valid", iss.token(t, good), 200},
		{"bad signature", forger.token(t, good), 401},
		{"wrong issuer", iss.token(t, with(func(c *jwt.Claims) { c.Issuer = "https://other.test" })), 401},
		{"wrong audience", iss.token(t, with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"other"} })), 401},
		{"expired", iss.token(t, with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-time.Hour)) })), 401},
	} {
		r := b.do(t, http.MethodGet, "/agents", tc.token, nil)
		if r.status != tc.status {
			t.Errorf("%s: %d %s; want %d", tc.name, r.status, r.body, tc.status)
		}
	}
	// Carol's thread is hers: alice cannot see it.
	tok := iss.token(t, good)
	if r := b.do(t, http.MethodPost, "/agents/streamer", tok, runBody("th-carol", "r1", false, userMsg("u1", "hello"))); r.status != 200 {
		t.Fatalf("carol's run: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodGet, "/agents/streamer/threads/th-carol", tok, nil); r.status != 200 {
		t.Errorf("carol's snapshot: %d", r.status)
	}
	if r := b.do(t, http.MethodGet, "/agents/streamer/threads/th-carol", aliceKey, nil); r.status != 404 {
		t.Errorf("alice on carol's thread: %d", r.status)
	}
}

// TestMetricsPublic: metrics.public serves /metrics without credentials,
// and only /metrics.
func TestMetricsPublic(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) {
		withAuth(nil)(c)
		c.Metrics.Public = true
	})
	if r := b.do(t, http.MethodGet, "/metrics", "", nil); r.status != 200 {
		t.Errorf("/metrics: %d", r.status)
	}
	if r := b.do(t, http.MethodGet, "/agents", "", nil); r.status != 401 {
		t.Errorf("/agents: %d", r.status)
	}
}
