package a2a

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// KeySet is the set of public keys an agent's card must be signed with
// (A2A v1.0 §8.4). Keys from a JWKS or JWK carry their kid and match only
// signatures naming it; keys from PEM have no kid and are tried against
// every signature.
type KeySet struct {
	keys []trustedKey
}

type trustedKey struct {
	kid string // "" for PEM keys
	key crypto.PublicKey
}

// signatureAlgs are the JWS algorithms accepted. "none" and the HMAC
// algorithms are not: a card is verified with public keys only.
var signatureAlgs = []jose.SignatureAlgorithm{
	jose.ES256, jose.ES384, jose.ES512,
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.EdDSA,
}

// LoadKeySet reads trusted keys. Each source is inline PEM (it starts with
// "-----BEGIN"), inline JSON (a JWKS or one JWK, starting with "{"), or the
// path of a file holding either.
func LoadKeySet(sources []string) (*KeySet, error) {
	ks := &KeySet{}
	for i, src := range sources {
		data := []byte(src)
		name := fmt.Sprintf("key %d (inline)", i)
		t := strings.TrimSpace(src)
		if !strings.HasPrefix(t, "-----BEGIN") && !strings.HasPrefix(t, "{") {
			b, err := os.ReadFile(src)
			if err != nil {
				return nil, fmt.Errorf("trusted key: %w", err)
			}
			data, name = b, src
		}
		n, err := ks.add(data)
		if err != nil {
			return nil, fmt.Errorf("trusted key %s: %w", name, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("trusted key %s: holds no public key", name)
		}
	}
	if len(ks.keys) == 0 {
		return nil, errors.New("no trusted keys")
	}
	return ks, nil
}

// add parses PEM or JWK(S) data and returns how many keys it added.
func (ks *KeySet) add(data []byte) (int, error) {
	t := bytes.TrimSpace(data)
	if bytes.HasPrefix(t, []byte("{")) {
		var set jose.JSONWebKeySet
		if err := json.Unmarshal(t, &set); err == nil && len(set.Keys) > 0 {
			for _, k := range set.Keys {
				if err := ks.addJWK(k); err != nil {
					return 0, err
				}
			}
			return len(set.Keys), nil
		}
		var k jose.JSONWebKey
		if err := json.Unmarshal(t, &k); err != nil {
			return 0, fmt.Errorf("not a JWK or JWKS: %w", err)
		}
		return 1, ks.addJWK(k)
	}
	n := 0
	for {
		var b *pem.Block
		b, t = pem.Decode(t)
		if b == nil {
			break
		}
		switch b.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(b.Bytes)
			if err != nil {
				return 0, err
			}
			ks.keys = append(ks.keys, trustedKey{key: k})
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return 0, err
			}
			ks.keys = append(ks.keys, trustedKey{key: c.PublicKey})
		default:
			return 0, fmt.Errorf("PEM block %q: want PUBLIC KEY or CERTIFICATE", b.Type)
		}
		n++
	}
	return n, nil
}

func (ks *KeySet) addJWK(k jose.JSONWebKey) error {
	if !k.Valid() {
		return errors.New("invalid JWK")
	}
	if !k.IsPublic() {
		// A private key in a trust store is a leak waiting to happen.
		return fmt.Errorf("JWK %q is a private key: give the public key only", k.KeyID)
	}
	ks.keys = append(ks.keys, trustedKey{kid: k.KeyID, key: k.Key})
	return nil
}

// VerifyCard checks that body, a raw agent card, carries at least one
// signature that verifies against a trusted key. A failure is a
// *TrustError saying why.
//
// The signed payload is the card without "signatures", canonicalised with
// JCS (RFC 8785). The spec also drops default values; the JS and Python
// SDKs implement that as dropping null, "", [] and {} recursively. Both the
// cleaned and the as-served form are tried, so cards signed either way
// verify; neither differs from the card the bridge uses in meaning.
func (ks *KeySet) VerifyCard(body []byte) error {
	var card map[string]json.RawMessage
	if err := json.Unmarshal(body, &card); err != nil {
		return &TrustError{Reason: "card is not a JSON object"}
	}
	var sigs []struct {
		Protected string `json:"protected"`
		Signature string `json:"signature"`
	}
	if raw, ok := card["signatures"]; ok {
		if err := json.Unmarshal(raw, &sigs); err != nil {
			return &TrustError{Reason: "card signatures are malformed"}
		}
	}
	if len(sigs) == 0 {
		return &TrustError{Reason: "card is not signed, and trusted keys are configured"}
	}
	delete(card, "signatures")
	payloads, err := canonicalCards(card)
	if err != nil {
		return &TrustError{Reason: "card cannot be canonicalised: " + err.Error()}
	}
	var reasons []string
	for i, s := range sigs {
		err := ks.verifyOne(s.Protected, s.Signature, payloads)
		if err == nil {
			return nil
		}
		reasons = append(reasons, fmt.Sprintf("signature %d: %v", i, err))
	}
	return &TrustError{Reason: "no card signature verifies: " + strings.Join(reasons, "; ")}
}

// canonicalCards returns the JCS forms of the card, cleaned and as served.
func canonicalCards(card map[string]json.RawMessage) ([][]byte, error) {
	raw, err := json.Marshal(card)
	if err != nil {
		return nil, err
	}
	asServed, err := jcs.Transform(raw)
	if err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers as written for JCS to format
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	cleaned, err := json.Marshal(dropEmpty(v))
	if err != nil {
		return nil, err
	}
	if cleaned, err = jcs.Transform(cleaned); err != nil {
		return nil, err
	}
	if bytes.Equal(cleaned, asServed) {
		return [][]byte{cleaned}, nil
	}
	return [][]byte{cleaned, asServed}, nil
}

// dropEmpty removes null, "", [] and {} recursively (false and 0 stay).
func dropEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			e = dropEmpty(e)
			if isEmpty(e) {
				delete(t, k)
			} else {
				t[k] = e
			}
		}
		return t
	case []any:
		out := t[:0]
		for _, e := range t {
			if e = dropEmpty(e); !isEmpty(e) {
				out = append(out, e)
			}
		}
		return out
	}
	return v
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// verifyOne checks one detached JWS (protected header, signature) over
// any of the payloads.
func (ks *KeySet) verifyOne(protected, signature string, payloads [][]byte) error {
	if protected == "" || signature == "" {
		return errors.New("protected header or signature missing")
	}
	hdr, err := base64.RawURLEncoding.DecodeString(protected)
	if err != nil {
		return errors.New("protected header is not base64url")
	}
	var h struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(hdr, &h); err != nil {
		return errors.New("protected header is not JSON")
	}
	candidates := ks.candidates(h.Kid)
	if len(candidates) == 0 {
		return fmt.Errorf("unknown key id %q", h.Kid)
	}
	for _, p := range payloads {
		obj, err := jose.ParseDetached(protected+".."+signature, p, signatureAlgs)
		if err != nil {
			return fmt.Errorf("unusable JWS (alg %q): %v", h.Alg, err)
		}
		for _, k := range candidates {
			if err := obj.DetachedVerify(p, k); err == nil {
				return nil
			}
		}
	}
	if h.Kid == "" {
		return errors.New("does not verify with any trusted key")
	}
	return fmt.Errorf("does not verify with key %q", h.Kid)
}

// candidates are the keys to try for kid: the JWKs with that kid, plus
// every key without a kid (PEM). A JWK with another kid is never tried.
func (ks *KeySet) candidates(kid string) []crypto.PublicKey {
	var out []crypto.PublicKey
	for _, k := range ks.keys {
		if k.kid == "" || (kid != "" && k.kid == kid) {
			out = append(out, k.key)
		}
	}
	return out
}
