package auth_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/auth"
)

// Issue 33 item 5: a JWKS URL that redirects is followed only to a URL
// the configured one could have been (https://, or http:// on a loopback
// host). The key server here answers 302 to http://keys.example/, which
// the client's transport would reach (it dials every host to a server
// holding a valid JWKS): the old fetch followed it and took its keys.
func TestJWKSRedirectsKeepTheRule(t *testing.T) {
	t.Parallel()
	good := newIssuer(t, "k1")
	keys, err := os.ReadFile(good.jwks)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(keys)
	}))
	t.Cleanup(elsewhere.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://keys.example/jwks.json", http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "keys.example:") {
			addr = elsewhere.Listener.Addr().String()
		}
		return dialer.DialContext(ctx, network, addr)
	}}}
	_, err = auth.New(t.Context(), auth.Options{JWT: &auth.JWTOptions{JWKS: redirector.URL + "/jwks.json",
		Issuer: "https://idp.example", Audience: "bridge", Client: client}})
	if err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("keys taken through a redirect to plain http on another host (err %v)", err)
	}
	// The same server, named directly, is a loopback http URL: allowed.
	if _, err := auth.New(t.Context(), auth.Options{JWT: &auth.JWTOptions{JWKS: elsewhere.URL + "/jwks.json",
		Issuer: "https://idp.example", Audience: "bridge"}}); err != nil {
		t.Fatalf("a loopback JWKS URL: %v", err)
	}
}
