package server

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/auth"
)

// TestCallerTokenIsNotTheBridgeKey: a run forwards the caller's
// Authorization to agents that ask for it, but never one of the bridge's own
// API keys, which would hand the agent the key to the bridge.
func TestCallerTokenIsNotTheBridgeKey(t *testing.T) {
	authn, err := auth.New(context.Background(), auth.Options{Keys: []auth.Key{{Digest: sha256.Sum256([]byte("bridge-key-0123456789")), Principal: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	forwarded := func(authn *auth.Authenticator, header string) string {
		seen := "unset"
		h := withCallerAuthorization(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = a2a.CallerAuthorization(r.Context())
		}), authn)
		r := httptest.NewRequest("POST", "/agents/a", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		return seen
	}
	for _, c := range []struct{ header, want string }{
		{"Bearer bridge-key-0123456789", ""},
		{"bearer bridge-key-0123456789", ""},
		{"Bearer eyJhbGciOi.a-user-jwt.sig", "Bearer eyJhbGciOi.a-user-jwt.sig"},
		{"Basic dXNlcjpwdw==", "Basic dXNlcjpwdw=="},
		{"", ""},
	} {
		if got := forwarded(authn, c.header); got != c.want {
			t.Errorf("Authorization %q: forwarded %q, want %q", c.header, got, c.want)
		}
	}
	// Without auth there is no bridge key to keep back.
	if got := forwarded(nil, "Bearer bridge-key-0123456789"); got != "Bearer bridge-key-0123456789" {
		t.Errorf("without auth: forwarded %q", got)
	}
}
