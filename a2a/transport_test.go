package a2a

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGRPCTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		target string
		tls    bool
	}{
		{"localhost:50051", "localhost:50051", false},
		{"grpc.example.com:443", "grpc.example.com:443", true},
		{"http://localhost:50051", "localhost:50051", false},
		{"grpc://10.0.0.1:9000/", "10.0.0.1:9000", false},
		{"https://grpc.example.com", "grpc.example.com:443", true},
		{"grpcs://grpc.example.com:8443/a2a", "grpc.example.com:8443", true},
		{"https://[::1]", "[::1]:443", true},
		{"dns:///grpc.example.com:50051", "dns:///grpc.example.com:50051", false},
		{"passthrough:///bufnet", "passthrough:///bufnet", false},
		{"unix:/tmp/a2a.sock", "unix:/tmp/a2a.sock", false},
	}
	for _, tc := range tests {
		target, useTLS := grpcTarget(tc.in)
		if target != tc.target || useTLS != tc.tls {
			t.Errorf("grpcTarget(%q) = %q, %v; want %q, %v", tc.in, target, useTLS, tc.target, tc.tls)
		}
	}
}

func TestFixupTransport(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/created":
			w.Header().Set("Content-Type", "application/a2a+json; charset=utf-8")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{}`)
		case "/deleted":
			w.WriteHeader(http.StatusNoContent)
		case "/a2a-error":
			w.Header().Set("Content-Type", "application/a2a+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":404}}`)
		case "/gateway":
			http.Error(w, "nope", http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)

	tests := []struct {
		name   string
		mode   bindingMode
		path   string
		status int    // want, when no error
		ct     string // want Content-Type, when no error
		errSt  int    // want HTTPStatusError code, 0 for none
	}{
		{"rest 201 a2a+json", modeREST, "/created", 200, "application/json; charset=utf-8", 0},
		{"rest 204", modeREST, "/deleted", 200, "", 0},
		{"rest typed error passes", modeREST, "/a2a-error", 404, "application/json", 0},
		{"rest gateway 401", modeREST, "/gateway", 0, "", 401},
		{"jsonrpc 201 untouched", modeJSONRPC, "/created", 201, "application/json; charset=utf-8", 0},
		{"jsonrpc any 4xx", modeJSONRPC, "/a2a-error", 0, "", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hc := withFixup(srv.Client(), tc.mode)
			resp, err := hc.Get(srv.URL + tc.path)
			if tc.errSt != 0 {
				var hs *HTTPStatusError
				if !errors.As(err, &hs) || hs.StatusCode != tc.errSt {
					t.Fatalf("err = %v, want HTTPStatusError %d", err, tc.errSt)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.ct {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, tc.ct)
			}
		})
	}
}
