package a2a

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Credentials are the secrets the bridge presents to one agent. Where each
// goes is the card's business (securitySchemes + securityRequirements):
// the operator gives the secret, the agent says the header, query parameter
// or cookie. They are sent on calls only, never on the card fetch, which
// happens before the card says anything.
type Credentials struct {
	// Bearer is sent as "Authorization: Bearer <Bearer>" for an http
	// scheme whose scheme is Bearer.
	Bearer string
	// APIKey is sent for an apiKey scheme, in the header, query parameter
	// or cookie the scheme names. A query key reaches HTTP bindings only.
	APIKey string
	// OAuth2, when set, fetches tokens with the client-credentials grant
	// for an oauth2 (or openIdConnect) scheme and sends them as bearer
	// tokens.
	OAuth2 *OAuth2
	// ForwardCallerToken sends the Authorization header of the AG-UI
	// request that started the run (see WithCallerAuthorization) instead
	// of any configured Authorization.
	ForwardCallerToken bool
}

// OAuth2 is a client-credentials grant (RFC 6749 §4.4).
type OAuth2 struct {
	// TokenURL is the token endpoint. Default: the tokenUrl of the card's
	// oauth2 scheme's clientCredentials flow, which must then be on an
	// allowed host (the client secret goes there).
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

func (c Credentials) any() bool { return c.Bearer != "" || c.APIKey != "" || c.OAuth2 != nil }

// tokenEarly is how long before its expiry a token is replaced: a run's
// stream may start just before the token would expire and then be refused
// half-way through its handshake.
const tokenEarly = 30 * time.Second

// credInterceptor presents the credentials chosen for a card.
type credInterceptor struct {
	a2aclient.PassthroughInterceptor
	headers map[string]string // fixed: bearer, header and cookie API keys
	tokens  *tokenCache       // nil unless OAuth2
	query   *queryKey         // nil unless an API key goes in the query
}

func (c *credInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	if c.tokens != nil && len(req.ServiceParams.Get("authorization")) == 0 {
		tok, err := c.tokens.token(ctx)
		if err != nil {
			// The grant's error may quote the token endpoint's answer, never
			// the secret; still, keep it short and typed.
			return ctx, nil, fmt.Errorf("%w: oauth2 token: %w", ErrUnauthenticated, redactOAuth(err))
		}
		req.ServiceParams.Append("authorization", "Bearer "+tok.AccessToken)
	}
	for k, v := range c.headers {
		if k == "cookie" {
			req.ServiceParams.Append(k, v) // cookies add up
			continue
		}
		if len(req.ServiceParams.Get(k)) == 0 {
			req.ServiceParams.Append(k, v)
		}
	}
	return ctx, nil, nil
}

// redactOAuth keeps the token endpoint's error code and drops the rest: a
// *oauth2.RetrieveError carries the response body, which some servers fill
// with the request they received.
func redactOAuth(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" && re.Response != nil {
			code = re.Response.Status
		}
		return fmt.Errorf("the token endpoint refused the client: %s", code)
	}
	return err
}

// planCredentials chooses, from the card's security requirements, the
// first alternative the credentials can satisfy and builds the interceptor
// that presents it. A card without schemes gets the bearer (or OAuth2)
// token in Authorization, the obvious place; an API key has no obvious
// place, so that case is an error, as is a card whose every alternative
// needs something not configured.
func planCredentials(o Options, card *AgentCard, guard *hostGuard, hc *http.Client) (*credInterceptor, error) {
	c := o.Credentials
	ci := &credInterceptor{headers: map[string]string{}}
	if !c.any() {
		return ci, nil
	}
	alts := requirementAlternatives(card)
	if len(alts) == 0 {
		switch {
		case c.OAuth2 != nil:
			ts, err := tokenSource(c.OAuth2, "", guard, hc)
			if err != nil {
				return nil, err
			}
			ci.tokens = ts
		case c.Bearer != "":
			ci.headers["authorization"] = "Bearer " + c.Bearer
		default:
			return nil, errors.New("an API key is configured but the card declares no apiKey security scheme to say where it goes")
		}
		return ci, nil
	}
	var reasons []string
	for _, alt := range alts {
		next := &credInterceptor{headers: map[string]string{}}
		ok := true
		for _, name := range alt {
			if why := next.add(c, name, card.SecuritySchemes[name], guard, hc); why != "" {
				reasons = append(reasons, why)
				ok = false
				break
			}
		}
		if ok {
			return next, nil
		}
	}
	return nil, fmt.Errorf("no security requirement of the card can be met with the configured credentials: %s", strings.Join(dedupe(reasons), "; "))
}

// add arranges for one named scheme; it returns why it cannot.
func (ci *credInterceptor) add(c Credentials, name a2asdk.SecuritySchemeName, s a2asdk.SecurityScheme, guard *hostGuard, hc *http.Client) string {
	switch s := deref(s).(type) {
	case a2asdk.HTTPAuthSecurityScheme:
		if !strings.EqualFold(s.Scheme, "bearer") {
			return fmt.Sprintf("scheme %q is http %q, only Bearer is supported", name, s.Scheme)
		}
		switch {
		case c.Bearer != "":
			ci.headers["authorization"] = "Bearer " + c.Bearer
		case c.OAuth2 != nil && ci.tokens == nil:
			ts, err := tokenSource(c.OAuth2, "", guard, hc)
			if err != nil {
				return err.Error()
			}
			ci.tokens = ts
		default:
			return fmt.Sprintf("scheme %q needs auth.bearer", name)
		}
	case a2asdk.APIKeySecurityScheme:
		if c.APIKey == "" {
			return fmt.Sprintf("scheme %q needs auth.apiKey", name)
		}
		if s.Name == "" || !validToken(s.Name) {
			return fmt.Sprintf("scheme %q names no usable parameter", name)
		}
		switch strings.ToLower(string(s.Location)) {
		case "header", "":
			ci.headers[strings.ToLower(s.Name)] = c.APIKey
		case "cookie":
			ci.headers["cookie"] = s.Name + "=" + c.APIKey
		case "query":
			ci.query = &queryKey{name: s.Name, value: c.APIKey}
		default:
			return fmt.Sprintf("scheme %q puts its key in %q", name, s.Location)
		}
	case a2asdk.OAuth2SecurityScheme:
		if c.OAuth2 == nil {
			return fmt.Sprintf("scheme %q needs auth.oauth2", name)
		}
		cardURL := ""
		if f, ok := deref(s.Flows).(a2asdk.ClientCredentialsOAuthFlow); ok {
			cardURL = f.TokenURL
		}
		ts, err := tokenSource(c.OAuth2, cardURL, guard, hc)
		if err != nil {
			return fmt.Sprintf("scheme %q: %v", name, err)
		}
		ci.tokens = ts
	case a2asdk.OpenIDConnectSecurityScheme:
		// The discovery document is not fetched: a configured token URL
		// is required, the grant is the same.
		if c.OAuth2 == nil || c.OAuth2.TokenURL == "" {
			return fmt.Sprintf("scheme %q (openIdConnect) needs auth.oauth2 with tokenURL", name)
		}
		ts, err := tokenSource(c.OAuth2, "", guard, hc)
		if err != nil {
			return err.Error()
		}
		ci.tokens = ts
	case nil:
		return fmt.Sprintf("scheme %q is required but not declared in securitySchemes", name)
	default:
		return fmt.Sprintf("scheme %q is of a kind the bridge cannot present (%T)", name, s)
	}
	return ""
}

// deref turns the pointer forms the SDK may decode into values, so one type
// switch covers both.
func deref(v any) any {
	switch p := v.(type) {
	case *a2asdk.HTTPAuthSecurityScheme:
		if p != nil {
			return *p
		}
	case *a2asdk.APIKeySecurityScheme:
		if p != nil {
			return *p
		}
	case *a2asdk.OAuth2SecurityScheme:
		if p != nil {
			return *p
		}
	case *a2asdk.OpenIDConnectSecurityScheme:
		if p != nil {
			return *p
		}
	case *a2asdk.MutualTLSSecurityScheme:
		if p != nil {
			return *p
		}
	case *a2asdk.ClientCredentialsOAuthFlow:
		if p != nil {
			return *p
		}
	default:
		return v
	}
	return nil
}

// requirementAlternatives lists the card's security alternatives (an OR of
// ANDs), each sorted for a stable choice. A card that declares schemes but
// no requirements (common with v0.3 cards) offers each scheme alone.
func requirementAlternatives(card *AgentCard) [][]a2asdk.SecuritySchemeName {
	var out [][]a2asdk.SecuritySchemeName
	for _, req := range card.SecurityRequirements {
		var alt []a2asdk.SecuritySchemeName
		for name := range req {
			alt = append(alt, name)
		}
		if len(alt) == 0 {
			continue // an empty requirement means "no auth": nothing to present
		}
		slices.Sort(alt)
		out = append(out, alt)
	}
	if len(out) == 0 {
		var names []a2asdk.SecuritySchemeName
		for name := range card.SecuritySchemes {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, n := range names {
			out = append(out, []a2asdk.SecuritySchemeName{n})
		}
	}
	return out
}

func dedupe(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// validToken reports whether s is an HTTP token (RFC 9110 §5.6.2), usable
// as a header, cookie or query parameter name without escaping surprises.
func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// tokenSource builds a cached client-credentials token source. The token
// endpoint is the configured one, else the card's, which must be on an
// allowed host since the client secret is sent there. Token requests use
// the agent's HTTP client (no redirects off the allowed hosts).
func tokenSource(c *OAuth2, cardURL string, guard *hostGuard, hc *http.Client) (*tokenCache, error) {
	tokenURL := c.TokenURL
	if tokenURL == "" {
		if cardURL == "" {
			return nil, errors.New("no token URL: set auth.oauth2.tokenURL (the card names none)")
		}
		if err := guard.checkHTTP(cardURL); err != nil {
			return nil, &TrustError{Reason: "card oauth2 tokenUrl: " + err.Error()}
		}
		tokenURL = cardURL
	}
	cfg := &clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: tokenURL, Scopes: c.Scopes}
	return &tokenCache{cfg: cfg, hc: hc}, nil
}

// tokenCache holds the current token and fetches a new one, on the
// calling request's context (its deadline, its trace), once the current
// one is within tokenEarly of its expiry. clientcredentials' own
// TokenSource would need a context for its whole life and uses a fixed
// 10 s margin. Concurrent callers wait for one fetch.
type tokenCache struct {
	cfg *clientcredentials.Config
	hc  *http.Client

	mu  sync.Mutex
	tok *oauth2.Token
}

func (c *tokenCache) token(ctx context.Context) (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.tok; t != nil && t.AccessToken != "" && (t.Expiry.IsZero() || time.Until(t.Expiry) > tokenEarly) {
		return t, nil
	}
	t, err := c.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, c.hc))
	if err != nil {
		return nil, err
	}
	c.tok = t
	return t, nil
}

// queryKey puts an API key in the query string of every HTTP call. The
// request is cloned so that the URL http.Client reports in errors (and
// that may end up in logs) is the one without the key.
type queryKey struct {
	name, value string
}

func (q *queryKey) client(hc *http.Client) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &queryTransport{base: base, key: q}
	return &c
}

type queryTransport struct {
	base http.RoundTripper
	key  *queryKey
}

func (t *queryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	q := r.URL.Query()
	q.Set(t.key.name, t.key.value)
	r.URL.RawQuery = q.Encode()
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), t.key.value, "[redacted]"))
	}
	return resp, nil
}

// callerKey carries the inbound Authorization header in a context.
type callerKey struct{}

// WithCallerAuthorization returns a context carrying the Authorization
// header of the AG-UI request a run serves. Calls made with it to an agent
// whose Credentials.ForwardCallerToken is set carry that header; other
// agents never see it.
func WithCallerAuthorization(ctx context.Context, authorization string) context.Context {
	if authorization == "" {
		return ctx
	}
	return context.WithValue(ctx, callerKey{}, authorization)
}

// CallerAuthorization returns what WithCallerAuthorization attached, or "".
func CallerAuthorization(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}

// callerInterceptor forwards the caller's Authorization when enabled.
type callerInterceptor struct {
	a2aclient.PassthroughInterceptor
	enabled bool
}

func (c *callerInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	if !c.enabled {
		return ctx, nil, nil
	}
	if v := CallerAuthorization(ctx); v != "" && len(req.ServiceParams.Get("authorization")) == 0 {
		req.ServiceParams.Append("authorization", v)
	}
	return ctx, nil, nil
}
