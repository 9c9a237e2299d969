package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"strings"
)

// ErrUnauthenticated is returned for a missing, malformed or unknown
// credential. Its message is the same whatever went wrong, so a caller
// cannot probe which keys exist.
var ErrUnauthenticated = errors.New("auth: missing or invalid bearer credential")

// Key is one static API key: the SHA-256 digest of the key (the key itself
// is never kept) and the principal it authenticates.
type Key struct {
	Digest    [sha256.Size]byte
	Principal string
}

// Options configure an Authenticator.
type Options struct {
	// Keys are the static API keys.
	Keys []Key
	// JWT, when set, also accepts JWTs signed by a key of its JWKS.
	JWT *JWTOptions
}

// Authenticator maps bearer tokens to principals. It is safe for
// concurrent use.
type Authenticator struct {
	keys []Key
	jwt  *jwtVerifier
}

// New returns an Authenticator. With a JWKS URL, the first fetch happens
// here: a bridge that cannot read its keys refuses to start rather than
// refusing every caller.
func New(ctx context.Context, opt Options) (*Authenticator, error) {
	a := &Authenticator{keys: opt.Keys}
	if opt.JWT != nil {
		v, err := newJWTVerifier(ctx, *opt.JWT)
		if err != nil {
			return nil, err
		}
		a.jwt = v
	}
	return a, nil
}

// Close stops the JWKS refresh, if any.
func (a *Authenticator) Close() {
	if a.jwt != nil {
		a.jwt.close()
	}
}

// Authenticate returns the principal token stands for: a static key's
// principal, else a valid JWT's issuer and subject (JWTPrincipal). Every
// failure is
// ErrUnauthenticated (wrapped, for logs).
func (a *Authenticator) Authenticate(ctx context.Context, token string) (string, error) {
	if token == "" {
		return "", ErrUnauthenticated
	}
	// Every key is compared, so the time taken does not say which one
	// matched; comparing digests makes the comparison length-independent.
	d := sha256.Sum256([]byte(token))
	principal := ""
	for _, k := range a.keys {
		if subtle.ConstantTimeCompare(d[:], k.Digest[:]) == 1 {
			principal = k.Principal
		}
	}
	if principal != "" {
		return principal, nil
	}
	if a.jwt != nil && strings.Count(token, ".") == 2 {
		sub, err := a.jwt.verify(ctx, token)
		if err != nil {
			return "", errors.Join(ErrUnauthenticated, err)
		}
		return sub, nil
	}
	return "", ErrUnauthenticated
}

// LegacyPrincipal is the principal the JWT principal p had before each
// issuer got its own namespace (the bare subject), when threads filed
// under it can only have been made by that subject: not when the subject
// is also an API key's principal, whose threads they may be. "" for any
// other principal. The run service moves such threads to p on first use
// (tasks: the migration of stored threads).
func (a *Authenticator) LegacyPrincipal(p string) string {
	if a.jwt == nil {
		return ""
	}
	sub, ok := strings.CutPrefix(p, a.jwt.opt.Issuer+"#")
	if !ok || sub == "" {
		return ""
	}
	for _, k := range a.keys {
		if k.Principal == sub {
			return ""
		}
	}
	return sub
}

// IsAPIKey reports whether token is one of the configured API keys. The
// bridge's own keys are credentials for the bridge alone: a run never
// forwards one to an agent, even one configured to receive the caller's
// token (a JWT, which an agent can verify with the issuer, is forwarded).
func (a *Authenticator) IsAPIKey(token string) bool {
	d := sha256.Sum256([]byte(token))
	found := 0
	for _, k := range a.keys {
		found |= subtle.ConstantTimeCompare(d[:], k.Digest[:])
	}
	return found == 1
}

// BearerToken extracts the token of an "Authorization: Bearer <token>"
// header value (the scheme is case-insensitive, RFC 7235 §2.1). It reports
// false for any other scheme, an empty token, or a token with spaces or
// control characters.
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	if token == "" || len(token) > maxTokenBytes {
		return "", false
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c == 0x7f {
			return "", false
		}
	}
	return token, true
}

// maxTokenBytes bounds a bearer token: large enough for any JWT a
// reasonable issuer mints, small enough that parsing a hostile one is cheap.
const maxTokenBytes = 16 << 10

type principalKey struct{}

// WithPrincipal returns ctx carrying the authenticated principal.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

type legacyKey struct{}

// WithLegacyPrincipal returns ctx carrying the principal the caller's
// threads may still be filed under (Authenticator.LegacyPrincipal).
func WithLegacyPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, legacyKey{}, principal)
}

// LegacyPrincipalFrom returns the legacy principal ctx carries, or "".
func LegacyPrincipalFrom(ctx context.Context) string {
	p, _ := ctx.Value(legacyKey{}).(string)
	return p
}

// PrincipalFrom returns the principal ctx carries; "" when the request was
// not authenticated (the bridge runs without auth).
func PrincipalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}
