package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/a2a-agui-bridge/bridge/auth"
)

func TestBearerToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER  abc.def-ghi", "abc.def-ghi", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearer a b", "", false},
		{"Bearer a\tb", "", false},
		{"", "", false},
	} {
		got, ok := auth.BearerToken(tc.header)
		if got != tc.token || ok != tc.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.header, got, ok, tc.token, tc.ok)
		}
	}
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	a, err := auth.New(t.Context(), auth.Options{Keys: []auth.Key{
		{Digest: sha256.Sum256([]byte("alice-key")), Principal: "alice"},
		{Digest: sha256.Sum256([]byte("bob-key")), Principal: "bob"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]string{"alice-key": "alice", "bob-key": "bob", "alice-key2": "", "": "", "a.b.c": ""} {
		got, err := a.Authenticate(t.Context(), token)
		if got != want || (want == "") != errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("Authenticate(%q) = %q, %v; want %q", token, got, err, want)
		}
	}
}

// issuer signs tokens with a fresh key whose public half is in a JWKS file.
type issuer struct {
	key  *ecdsa.PrivateKey
	kid  string
	jwks string
}

func newIssuer(t testing.TB, kid string) *issuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}}}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return &issuer{key: k, kid: kid, jwks: path}
}

// sign returns a compact JWS of c.
func (i *issuer) sign(t *testing.T, c jwt.Claims) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: i.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), i.kid))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJWT(t *testing.T) {
	t.Parallel()
	good := newIssuer(t, "k1")
	other := newIssuer(t, "k1") // same kid, different key: a forged signature
	a, err := auth.New(t.Context(), auth.Options{JWT: &auth.JWTOptions{JWKS: good.jwks, Issuer: "https://idp.example", Audience: "bridge"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	valid := jwt.Claims{Subject: "carol", Issuer: "https://idp.example", Audience: jwt.Audience{"bridge"},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute))}
	with := func(f func(*jwt.Claims)) jwt.Claims { c := valid; f(&c); return c }
	for _, tc := range []struct {
		name  string
		token string
		want  string
	}{
		{"valid", good.sign(t, valid), "https://idp.example#carol"},
		{"skew within leeway", good.sign(t, with(func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(now.Add(10 * time.Second)) })), "https://idp.example#carol"},
		{"bad signature", other.sign(t, valid), ""},
		{"wrong issuer", good.sign(t, with(func(c *jwt.Claims) { c.Issuer = "https://evil.example" })), ""},
		{"wrong audience", good.sign(t, with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"someone-else"} })), ""},
		{"expired", good.sign(t, with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-time.Hour)) })), ""},
		{"not yet valid", good.sign(t, with(func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Hour)) })), ""},
		{"no exp", good.sign(t, with(func(c *jwt.Claims) { c.Expiry = nil })), ""},
		{"no sub", good.sign(t, with(func(c *jwt.Claims) { c.Subject = "" })), ""},
		{"garbage", "a.b.c", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.Authenticate(t.Context(), tc.token)
			if got != tc.want {
				t.Fatalf("principal %q, err %v; want %q", got, err, tc.want)
			}
			if tc.want == "" && !errors.Is(err, auth.ErrUnauthenticated) {
				t.Fatalf("err %v, want ErrUnauthenticated", err)
			}
		})
	}
}

func TestJWKSRefusesPrivateKeys(t *testing.T) {
	t.Parallel()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k, KeyID: "x", Algorithm: "ES256"}}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.New(t.Context(), auth.Options{JWT: &auth.JWTOptions{JWKS: path}}); err == nil {
		t.Fatal("a JWKS with a private key was accepted")
	}
	if _, err := auth.New(t.Context(), auth.Options{JWT: &auth.JWTOptions{JWKS: filepath.Join(t.TempDir(), "missing.json")}}); err == nil {
		t.Fatal("a missing JWKS file was accepted")
	}
}

// FuzzAuthenticate feeds hostile Authorization headers through the bearer
// parser and the JWT verifier: they must never panic, and only the
// configured key authenticates.
func FuzzAuthenticate(f *testing.F) {
	f.Add("Bearer alice-key")
	f.Add("Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")
	f.Add("Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("Bearer eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0.e30.AAAA")
	f.Add("bearer ....")
	f.Add("Basic YWxpY2U6cHc=")
	is := newIssuer(f, "k1")
	a, err := auth.New(f.Context(), auth.Options{
		Keys: []auth.Key{{Digest: sha256.Sum256([]byte("alice-key")), Principal: "alice"}},
		JWT:  &auth.JWTOptions{JWKS: is.jwks, Issuer: "i", Audience: "a"},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header string) {
		token, ok := auth.BearerToken(header)
		if !ok {
			return
		}
		p, err := a.Authenticate(t.Context(), token)
		if (p == "") != (err != nil) {
			t.Fatalf("principal %q with err %v", p, err)
		}
		if p != "" && (p != "alice" || token != "alice-key") {
			t.Fatalf("token %q authenticated as %q", token, p)
		}
	})
}

// TestJWKSURL: a JWKS URL is fetched at start (a bridge that cannot read
// it does not start) and its keys verify tokens.
func TestJWKSURL(t *testing.T) {
	t.Parallel()
	is := newIssuer(t, "k1")
	set, err := os.ReadFile(is.jwks)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	defer srv.Close()
	a, err := auth.New(t.Context(), auth.Options{JWT: &auth.JWTOptions{JWKS: srv.URL + "/jwks", Issuer: "i", Audience: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tok := is.sign(t, jwt.Claims{Subject: "dave", Issuer: "i", Audience: jwt.Audience{"a"}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Minute))})
	if p, err := a.Authenticate(t.Context(), tok); p != "i#dave" {
		t.Fatalf("principal %q, %v", p, err)
	}
	if _, err := auth.New(t.Context(), auth.Options{JWT: &auth.JWTOptions{JWKS: srv.URL + "/missing", Issuer: "i", Audience: "a"}}); err == nil {
		t.Fatal("a JWKS URL answering 404 was accepted at start")
	}
}
