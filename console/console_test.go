package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui/aguihttp"
	"github.com/a2a-agui-bridge/bridge/console"
)

// oneAgent is the smallest catalog the bridge's handler needs.
type oneAgent struct{}

func (oneAgent) Has(name string) bool { return name == "a" }
func (oneAgent) Agents(context.Context) []aguihttp.AgentInfo {
	return []aguihttp.AgentInfo{{Name: "a"}}
}
func (oneAgent) Agent(_ context.Context, name string) (aguihttp.AgentInfo, bool) {
	return aguihttp.AgentInfo{Name: name}, name == "a"
}
func (oneAgent) Ready(context.Context) aguihttp.Readiness {
	return aguihttp.Readiness{Store: aguihttp.Health{Status: aguihttp.HealthOK}}
}

// bridge is the bridge's own handler with the console wired in, as
// package server wires it.
func bridge(t *testing.T, withConsole bool) *httptest.Server {
	t.Helper()
	opt := aguihttp.Options{Catalog: oneAgent{}}
	if withConsole {
		opt.Console = console.Handler()
	}
	srv := httptest.NewServer(aguihttp.New(opt))
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status      int
	contentType string
	header      http.Header
	body        string
}

func get(t *testing.T, url string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{res.StatusCode, res.Header.Get("Content-Type"), res.Header, string(b)}
}

func TestServesPageAndAssets(t *testing.T) {
	t.Parallel()
	srv := bridge(t, true)
	for _, tc := range []struct {
		path, contentType, contains string
	}{
		{"/", "text/html; charset=utf-8", `<script type="module" src="console/js/main.js">`},
		{"/console/console.css", "text/css; charset=utf-8", ".timeline"},
		{"/console/js/main.js", "text/javascript; charset=utf-8", "import"},
		{"/console/js/jsonpatch.js", "text/javascript; charset=utf-8", "export function applyPatch"},
		{"/console/icon.svg", "image/svg+xml", "<svg"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			a := get(t, srv.URL+tc.path)
			if a.status != http.StatusOK || a.contentType != tc.contentType {
				t.Fatalf("GET %s: %d %q, want 200 %q", tc.path, a.status, a.contentType, tc.contentType)
			}
			if !strings.Contains(a.body, tc.contains) {
				t.Errorf("GET %s: body lacks %q", tc.path, tc.contains)
			}
			for _, h := range []string{"ETag", "Content-Security-Policy", "X-Content-Type-Options"} {
				if a.header.Get(h) == "" {
					t.Errorf("GET %s: no %s header", tc.path, h)
				}
			}
		})
	}
}

// Every asset the page and its modules name must be served: a module the
// embed missed would leave a blank page, which no Go test would otherwise
// notice.
func TestEveryReferencedAssetIsServed(t *testing.T) {
	t.Parallel()
	srv := bridge(t, true)
	seen := map[string]bool{}
	refs := regexp.MustCompile(`(?:src|href)="(console/[^"]+)"|from '\./([^']+\.js)'`)
	queue := []string{"/"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		a := get(t, srv.URL+p)
		if a.status != http.StatusOK {
			t.Errorf("GET %s: %d", p, a.status)
			continue
		}
		for _, m := range refs.FindAllStringSubmatch(a.body, -1) {
			switch {
			case m[1] != "":
				queue = append(queue, "/"+m[1])
			case m[2] != "":
				queue = append(queue, p[:strings.LastIndex(p, "/")+1]+m[2])
			}
		}
	}
	if len(seen) < 9 { // the page, its stylesheet and icon, and the six modules
		t.Errorf("followed %d files, want the page, its assets and every module: %v", len(seen), seen)
	}
}

func TestRevalidatesWithETag(t *testing.T) {
	t.Parallel()
	srv := bridge(t, true)
	first := get(t, srv.URL+"/console/js/main.js")
	etag := first.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if again := get(t, srv.URL+"/console/js/main.js", "If-None-Match", etag); again.status != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: %d, want 304", again.status)
	}
}

// The bridge's own routes, and its JSON 404 for anything unknown, are the
// same with the console as without it.
func TestOtherRoutesUnaffected(t *testing.T) {
	t.Parallel()
	withConsole, without := bridge(t, true), bridge(t, false)
	notFound := func(t *testing.T, srv *httptest.Server, path string) {
		t.Helper()
		a := get(t, srv.URL+path)
		var body struct {
			Error struct{ Code, Message string }
		}
		if a.status != http.StatusNotFound || a.contentType != "application/json" || json.Unmarshal([]byte(a.body), &body) != nil || body.Error.Code != "not_found" {
			t.Errorf("GET %s: %d %q %s, want a JSON 404 not_found", path, a.status, a.contentType, a.body)
		}
	}
	for _, p := range []string{"/nope", "/console", "/console/", "/console/nope.js", "/console/index.html", "/index.html"} {
		notFound(t, withConsole, p)
	}
	notFound(t, without, "/")
	notFound(t, without, "/console/js/main.js")
	for _, srv := range []*httptest.Server{withConsole, without} {
		if a := get(t, srv.URL+"/agents"); a.status != http.StatusOK || !strings.Contains(a.body, `"name":"a"`) {
			t.Errorf("GET /agents: %d %s", a.status, a.body)
		}
		if a := get(t, srv.URL+"/healthz"); a.status != http.StatusOK {
			t.Errorf("GET /healthz: %d", a.status)
		}
	}
	// Only GET reaches the console; anything else at / is the bridge's 404.
	res, err := http.Post(withConsole.URL+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("POST /: %d, want 404", res.StatusCode)
	}
}

// The handler on its own (without the bridge's mux) refuses what it does
// not serve in the same JSON shape.
func TestHandlerAlone(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(console.Handler())
	defer srv.Close()
	if a := get(t, srv.URL+"/elsewhere"); a.status != http.StatusNotFound || a.contentType != "application/json" {
		t.Errorf("GET /elsewhere: %d %q", a.status, a.contentType)
	}
	res, err := http.Post(srv.URL+"/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d Allow %q, want 405 GET, HEAD", res.StatusCode, res.Header.Get("Allow"))
	}
}

// The page loads images from the bridge and from data:/blob: URLs only:
// img-src http: https: let an agent's image URL make the console request
// any host, 169.254.169.254 included (issue 33 item 11). The browser suite
// (console-hostile-a2ui) checks that Chromium enforces it.
func TestImagesComeOnlyFromTheBridge(t *testing.T) {
	t.Parallel()
	csp := get(t, bridge(t, true).URL+"/").header.Get("Content-Security-Policy")
	for _, d := range strings.Split(csp, ";") {
		if f := strings.Fields(d); len(f) > 0 && f[0] == "img-src" {
			if got := strings.Join(f[1:], " "); got != "'self' data: blob:" {
				t.Errorf("img-src %s; want 'self' data: blob:", got)
			}
			return
		}
	}
	t.Errorf("no img-src in %q", csp)
}
