package a2a

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// signCard signs card (raw JSON without signatures) the way A2A v1.0 §8.4
// says: a JWS with detached payload over the JCS form of the card. The
// signature is appended to the card's signatures. It signs the form with
// empty values dropped, as the JS and Python SDKs do.
func signCard(t *testing.T, card []byte, alg jose.SignatureAlgorithm, key crypto.Signer, kid string) []byte {
	t.Helper()
	return signCardForm(t, card, alg, key, kid, true)
}

// signCardForm is signCard choosing the signed form: cleaned (empty values
// dropped) or the card as written.
func signCardForm(t *testing.T, card []byte, alg jose.SignatureAlgorithm, key crypto.Signer, kid string, cleaned bool) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(card, &m); err != nil {
		t.Fatal(err)
	}
	prev, _ := m["signatures"].([]any)
	delete(m, "signatures")
	var unsigned []byte
	if cleaned {
		// dropEmpty works in place: clean a copy, serve the card as written.
		var c map[string]any
		_ = json.Unmarshal(card, &c)
		delete(c, "signatures")
		unsigned, _ = json.Marshal(dropEmpty(c))
	} else {
		unsigned, _ = json.Marshal(m)
	}
	payload, err := jcs.Transform(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	opts := (&jose.SignerOptions{}).WithType("JOSE")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := obj.DetachedCompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	protected, sig, _ := strings.Cut(compact, "..")
	m["signatures"] = append(prev, map[string]any{"protected": protected, "signature": sig})
	out, _ := json.Marshal(m)
	return out
}

type testKeys struct {
	es  *ecdsa.PrivateKey
	rs  *rsa.PrivateKey
	ed  ed25519.PrivateKey
	dir string
}

func newTestKeys(t *testing.T) *testKeys {
	t.Helper()
	es, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	return &testKeys{es: es, rs: rs, ed: ed, dir: t.TempDir()}
}

// file writes content to a file in the keys' directory and returns its path.
func (k *testKeys) file(t *testing.T, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(k.dir, name)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func pemPublic(t *testing.T, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func jwks(t *testing.T, keys ...jose.JSONWebKey) []byte {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSignedCards dials real agents whose cards are signed (or not), with
// trusted keys from JWKS files, PEM files and inline PEM.
func TestSignedCards(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	k := newTestKeys(t)
	unsigned, err := json.Marshal(testCard(s.iface("jsonrpc")))
	if err != nil {
		t.Fatal(err)
	}
	// A card with empty values, as a JS agent would serve it: the signer
	// dropped them before canonicalising.
	var withEmpties map[string]any
	_ = json.Unmarshal(unsigned, &withEmpties)
	withEmpties["documentationUrl"] = ""
	withEmpties["provider"] = nil
	withEmpties["securitySchemes"] = map[string]any{}
	empties, _ := json.Marshal(withEmpties)

	esJWKS := k.file(t, "es.jwks", jwks(t, jose.JSONWebKey{Key: k.es.Public(), KeyID: "es-1", Algorithm: "ES256", Use: "sig"}))
	edJWK, _ := json.Marshal(jose.JSONWebKey{Key: k.ed.Public(), KeyID: "ed-1"})
	edFile := k.file(t, "ed.jwk", edJWK)
	rsPEM := k.file(t, "rs.pem", pemPublic(t, k.rs.Public()))
	otherES, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)

	tamper := func(b []byte) []byte {
		return []byte(strings.Replace(string(b), `"description":"test agent"`, `"description":"evil agent"`, 1))
	}
	for _, tc := range []struct {
		name    string
		card    []byte
		trusted []string
		refuse  string // "" accepts
	}{
		{"ES256 with JWKS", signCard(t, unsigned, jose.ES256, k.es, "es-1"), []string{esJWKS}, ""},
		{"RS256 with PEM file", signCard(t, unsigned, jose.RS256, k.rs, "any"), []string{rsPEM}, ""},
		{"RS256 with inline PEM", signCard(t, unsigned, jose.RS256, k.rs, ""), []string{string(pemPublic(t, k.rs.Public()))}, ""},
		{"EdDSA with JWK", signCard(t, unsigned, jose.EdDSA, k.ed, "ed-1"), []string{edFile}, ""},
		{"cleaned form (JS-style signer)", signCard(t, empties, jose.ES256, k.es, "es-1"), []string{esJWKS}, ""},
		{"form as served, empties kept", signCardForm(t, empties, jose.ES256, k.es, "es-1", false), []string{esJWKS}, ""},
		{"empties added after signing the cleaned form", []byte(strings.Replace(string(signCard(t, unsigned, jose.ES256, k.es, "es-1")), `"name":"test"`, `"name":"test","iconUrl":""`, 1)), []string{esJWKS}, ""},
		{"one good signature of two", signCard(t, signCard(t, unsigned, jose.ES256, otherES, "es-1"), jose.EdDSA, k.ed, "ed-1"), []string{esJWKS, edFile}, ""},
		{"no trusted keys: signature ignored", tamper(signCard(t, unsigned, jose.ES256, k.es, "es-1")), nil, ""},
		{"unsigned", unsigned, []string{esJWKS}, "card is not signed"},
		{"tampered", tamper(signCard(t, unsigned, jose.ES256, k.es, "es-1")), []string{esJWKS}, `does not verify with key "es-1"`},
		{"unknown kid", signCard(t, unsigned, jose.ES256, k.es, "es-2"), []string{esJWKS}, `unknown key id "es-2"`},
		{"wrong key, same kid", signCard(t, unsigned, jose.ES256, otherES, "es-1"), []string{esJWKS}, `does not verify`},
		{"wrong algorithm family", signCard(t, unsigned, jose.RS256, k.rs, "es-1"), []string{esJWKS}, `does not verify`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Options{Name: "signed", URL: s.serveCard("signed "+tc.name, rawCard(string(tc.card)))}
			if tc.trusted != nil {
				ks, err := LoadKeySet(tc.trusted)
				if err != nil {
					t.Fatalf("LoadKeySet: %v", err)
				}
				o.TrustedKeys = ks
			}
			agent, err := Dial(t.Context(), o)
			if tc.refuse != "" {
				wantUntrusted(t, err, tc.refuse)
				return
			}
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer agent.Close()
			if _, err := agent.GetTask(t.Context(), "x"); !errors.Is(err, ErrTaskNotFound) {
				t.Errorf("GetTask: %v", err)
			}
		})
	}
}

func TestLoadKeySet(t *testing.T) {
	t.Parallel()
	k := newTestKeys(t)
	priv, _ := json.Marshal(jose.JSONWebKey{Key: k.es, KeyID: "p"})
	for _, tc := range []struct {
		name    string
		sources []string
		want    string
	}{
		{"missing file", []string{filepath.Join(k.dir, "nope.pem")}, "no such file"},
		{"private JWK", []string{string(priv)}, "is a private key"},
		{"not a key", []string{k.file(t, "junk.pem", []byte("hello"))}, "holds no public key"},
		{"private PEM", []string{"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}, "want PUBLIC KEY or CERTIFICATE"},
		{"nothing", nil, "no trusted keys"},
	} {
		if _, err := LoadKeySet(tc.sources); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzVerifyCard: any card body and any signature entries are either
// verified or refused with a TrustError; nothing panics.
func FuzzVerifyCard(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ks := &KeySet{keys: []trustedKey{{kid: "k", key: key.Public()}, {key: key.Public()}}}
	f.Add([]byte(`{"name":"x","signatures":[{"protected":"eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ","signature":"AAAA"}]}`))
	f.Add([]byte(`{"signatures":[{"protected":"","signature":""}]}`))
	f.Add([]byte(`{"signatures":"x"}`))
	f.Add([]byte(`{"a":[1e400,{"b":null,"c":""}],"signatures":[{"protected":"eyJhbGciOiJub25lIn0","signature":"x"}]}`))
	f.Add([]byte(`{"n":-0.0000001,"s":"\ud800","signatures":[{"protected":"e30","signature":"e30"}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		err := ks.VerifyCard(body)
		var te *TrustError
		if err != nil && !errors.As(err, &te) {
			t.Fatalf("error %v is not a TrustError", err)
		}
	})
}
