package aguihttp

import (
	"net/http"
	"strings"
	"testing"
)

func TestRequestToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header http.Header
		token  string
		ok     bool
	}{
		{"authorization", http.Header{"Authorization": {"Bearer abc"}}, "abc", true},
		{"wrong scheme", http.Header{"Authorization": {"Basic abc"}}, "", false},
		{"subprotocol", http.Header{"Upgrade": {"websocket"}, "Sec-Websocket-Protocol": {"agui-bridge, bearer.abc.def"}}, "abc.def", true},
		{"subprotocol without upgrade", http.Header{"Sec-Websocket-Protocol": {"bearer.abc"}}, "", false},
		{"header wins", http.Header{"Authorization": {"Bearer h"}, "Upgrade": {"websocket"}, "Sec-Websocket-Protocol": {"bearer.p"}}, "h", true},
		{"empty subprotocol token", http.Header{"Upgrade": {"websocket"}, "Sec-Websocket-Protocol": {"bearer."}}, "", false},
		{"none", http.Header{}, "", false},
	} {
		r := &http.Request{Header: tc.header}
		got, ok := requestToken(r)
		if got != tc.token || ok != tc.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, ok, tc.token, tc.ok)
		}
	}
}

// FuzzRequestToken: hostile Authorization and Sec-WebSocket-Protocol
// headers never panic, and a token found never holds spaces or controls.
func FuzzRequestToken(f *testing.F) {
	f.Add("Bearer abc", "")
	f.Add("", "agui-bridge, bearer.eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
	f.Add("", "bearer., bearer.x,,")
	f.Add("bEaReR \x00", "bearer.\x7f")
	f.Fuzz(func(t *testing.T, authz, protocols string) {
		h := http.Header{"Upgrade": {"websocket"}}
		if authz != "" {
			h.Set("Authorization", authz)
		}
		if protocols != "" {
			h.Set("Sec-WebSocket-Protocol", protocols)
		}
		token, ok := requestToken(&http.Request{Header: h})
		if ok && (token == "" || strings.ContainsAny(token, " \t\r\n\x00")) {
			t.Fatalf("token %q from %q / %q", token, authz, protocols)
		}
		if !ok && token != "" {
			t.Fatalf("token %q without ok", token)
		}
	})
}
