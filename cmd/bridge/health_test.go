package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// bridge health exits 0 on a 200 /healthz and 1 on anything else or no
// answer; a listen address on every interface is asked on loopback.
func TestHealth(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
		}
	}))
	defer up.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"health", "--url", up.URL + "/healthz"}, 0},
		{[]string{"health", "--url", down.URL + "/healthz"}, 1},
		{[]string{"health", "--url", "http://127.0.0.1:1/healthz"}, 1},
		{[]string{"health", "--config", "/nonexistent/bridge.yaml"}, 2},
	} {
		var out, errOut bytes.Buffer
		if got := run(t.Context(), tc.args, &out, &errOut); got != tc.want {
			t.Errorf("%q: exit %d, want %d (%s)", tc.args, got, tc.want, errOut.String())
		}
	}
	for listen, want := range map[string]string{
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:8080":   "127.0.0.1:8080",
		"[::]:8080":      "[::1]:8080",
		"10.0.0.5:8080":  "10.0.0.5:8080",
		"localhost:9000": "localhost:9000",
	} {
		if got := dialable(listen); got != want {
			t.Errorf("dialable(%q) = %q, want %q", listen, got, want)
		}
	}
}
