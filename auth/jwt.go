package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// JWTOptions configure JWT verification.
type JWTOptions struct {
	// JWKS is a file path or an https:// URL of the JSON Web Key Set.
	JWKS string
	// Issuer and Audience must match the token's iss and aud.
	Issuer   string
	Audience string
	// Leeway tolerates clock skew on exp, nbf and iat. Default 30s.
	Leeway time.Duration
	// Refresh is how often a JWKS URL is fetched again, so rotated keys
	// are picked up. Default 10m. An unknown kid also triggers a fetch, at
	// most once per minimum interval.
	Refresh time.Duration
	// Client fetches a JWKS URL. Default: a client with a 10s timeout.
	Client *http.Client
}

// algorithms are the signature algorithms accepted: asymmetric only, so a
// public JWKS cannot be used to forge an HMAC token ("alg confusion").
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// minRefetch bounds refetches of a JWKS URL caused by unknown kids, so a
// caller sending random kids cannot make the bridge hammer the issuer.
const minRefetch = 30 * time.Second

type jwtVerifier struct {
	opt JWTOptions

	mu      sync.RWMutex
	keys    jose.JSONWebKeySet
	fetched time.Time
	fetchMu sync.Mutex // one fetch at a time

	stop chan struct{}
	done chan struct{}
}

func newJWTVerifier(ctx context.Context, opt JWTOptions) (*jwtVerifier, error) {
	if opt.Leeway <= 0 {
		opt.Leeway = 30 * time.Second
	}
	if opt.Refresh <= 0 {
		opt.Refresh = 10 * time.Minute
	}
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: 10 * time.Second}
	}
	opt.Client = guardJWKSRedirects(opt.Client)
	v := &jwtVerifier{opt: opt, stop: make(chan struct{}), done: make(chan struct{})}
	if err := v.load(ctx); err != nil {
		return nil, err
	}
	if isURL(opt.JWKS) {
		go v.refreshLoop()
	} else {
		close(v.done)
	}
	return v, nil
}

// guardJWKSRedirects returns a copy of hc that follows a redirect only to
// a URL the configured one could have been (config: https://, or http://
// only on a loopback host): a key server answering 302 would otherwise
// lead the bridge to fetch its keys over plain HTTP from anywhere
// (169.254.169.254, an intranet host), as card fetches already refuse
// (issue 33 item 5).
func guardJWKSRedirects(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !jwksURLAllowed(req.URL) {
			return fmt.Errorf("JWKS redirect to %s refused: keys come only from https:// (http:// on a loopback host)", req.URL.Redacted())
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// jwksURLAllowed is config's rule for auth.jwt.jwks, applied to u.
func jwksURLAllowed(u *url.URL) bool {
	switch u.Scheme {
	case "https":
		return true
	case "http":
		if strings.EqualFold(u.Hostname(), "localhost") {
			return true
		}
		ip := net.ParseIP(u.Hostname())
		return ip != nil && ip.IsLoopback()
	}
	return false
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

func (v *jwtVerifier) close() {
	select {
	case <-v.stop:
	default:
		close(v.stop)
	}
	<-v.done
}

// refreshLoop fetches a JWKS URL again every Refresh; a failed fetch keeps
// the keys it had.
func (v *jwtVerifier) refreshLoop() {
	defer close(v.done)
	t := time.NewTicker(v.opt.Refresh)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = v.load(ctx)
			cancel()
		}
	}
}

// maxJWKSBytes bounds a JWKS document.
const maxJWKSBytes = 1 << 20

// load reads the JWKS from its file or URL.
func (v *jwtVerifier) load(ctx context.Context) error {
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	var data []byte
	var err error
	if isURL(v.opt.JWKS) {
		data, err = v.fetch(ctx)
	} else {
		data, err = os.ReadFile(v.opt.JWKS)
	}
	if err != nil {
		return fmt.Errorf("auth: read JWKS %s: %w", v.opt.JWKS, err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		return fmt.Errorf("auth: JWKS %s: %w", v.opt.JWKS, err)
	}
	if len(set.Keys) == 0 {
		return fmt.Errorf("auth: JWKS %s holds no keys", v.opt.JWKS)
	}
	for _, k := range set.Keys {
		if !k.IsPublic() {
			return fmt.Errorf("auth: JWKS %s holds a private or symmetric key (kid %q); publish public keys only", v.opt.JWKS, k.KeyID)
		}
	}
	v.mu.Lock()
	v.keys, v.fetched = set, time.Now()
	v.mu.Unlock()
	return nil
}

func (v *jwtVerifier) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.opt.JWKS, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.opt.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
}

// claims are the registered claims the bridge checks.
type claims struct {
	jwt.Claims
}

var errNoKey = errors.New("no JWKS key matches the token's kid")

// verify checks the token's signature, issuer, audience and validity
// window, and returns its subject.
func (v *jwtVerifier) verify(ctx context.Context, token string) (string, error) {
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil {
		return "", err
	}
	if len(tok.Headers) != 1 {
		return "", errors.New("want exactly one signature")
	}
	kid := tok.Headers[0].KeyID
	keys := v.candidates(kid)
	if len(keys) == 0 && isURL(v.opt.JWKS) {
		// The issuer may have rotated its keys since the last fetch.
		v.mu.RLock()
		stale := time.Since(v.fetched) > minRefetch
		v.mu.RUnlock()
		if stale {
			_ = v.load(ctx)
			keys = v.candidates(kid)
		}
	}
	if len(keys) == 0 {
		return "", errNoKey
	}
	var c claims
	var verr error
	for _, k := range keys {
		if verr = tok.Claims(k.Key, &c); verr == nil {
			break
		}
	}
	if verr != nil {
		return "", verr
	}
	want := jwt.Expected{Issuer: v.opt.Issuer, Time: time.Now()}
	if v.opt.Audience != "" {
		want.AnyAudience = jwt.Audience{v.opt.Audience}
	}
	if err := c.ValidateWithLeeway(want, v.opt.Leeway); err != nil {
		return "", err
	}
	if c.Expiry == nil {
		return "", errors.New("token has no exp")
	}
	if c.Subject == "" {
		return "", errors.New("token has no sub")
	}
	return JWTPrincipal(v.opt.Issuer, c.Subject), nil
}

// JWTPrincipal is the principal of a JWT of issuer with subject sub:
// "<issuer>#<sub>". API-key principals cannot contain "#" (config refuses
// them), so a token's subject and a key's principal never name the same
// caller, and each issuer has a namespace of its own: before issue 33
// (item 9) a valid JWT with sub "alice" read the threads of API key
// "alice" and passed allow: [alice].
func JWTPrincipal(issuer, sub string) string { return issuer + "#" + sub }

// candidates are the keys that may have signed a token with kid: the one
// named, or every key when the token names none.
func (v *jwtVerifier) candidates(kid string) []jose.JSONWebKey {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if kid != "" {
		return v.keys.Key(kid)
	}
	return v.keys.Keys
}
