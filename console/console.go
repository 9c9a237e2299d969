package console

import (
	"github.com/a2a-agui-bridge/bridge/errcode"

	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// AssetPrefix is the path under which the console's assets are served; the
// page itself is served at "/".
const AssetPrefix = "/console/"

// contentSecurityPolicy keeps the page to its own origin: scripts, styles,
// images and requests go only to the bridge. Images also come from data:
// and blob: URLs (files the bridge inlines); an agent's link to an image
// elsewhere is shown as a link the user may open, never fetched by the page
// itself — img-src http: https: let an agent make every console that shows
// its answer request 169.254.169.254 or any intranet host (issue 33 item 11;
// the README says the console makes no request to anywhere but the bridge).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// contentTypes are fixed here rather than taken from mime.TypeByExtension,
// which reads the host's mime.types: a host mapping .js to text/plain would
// stop the browser from running the page's modules.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
}

// asset is one embedded file, ready to serve.
type asset struct {
	name        string
	body        []byte
	contentType string
	etag        string
}

// Handler returns the console: GET / is the page, GET /console/… its assets.
// Any other path, and any asset it does not have, is a 404 in the bridge's
// JSON error shape, so a mistyped URL reads the same wherever it lands.
func Handler() http.Handler {
	assets, err := load()
	if err != nil {
		// The files are compiled in: failing here is a build mistake, and
		// the console's test catches it.
		panic("console: " + err.Error())
	}
	return handler{assets: assets}
}

// load reads every embedded file once, with its content type and an ETag
// from its content, so a reload revalidates with 304 and a new binary is
// never served from a stale cache.
func load() (map[string]*asset, error) {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}
	assets := make(map[string]*asset)
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			ct = http.DetectContentType(b)
		}
		sum := sha256.Sum256(b)
		assets[p] = &asset{name: p, body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if assets["index.html"] == nil {
		return nil, fs.ErrNotExist
	}
	return assets, nil
}

type handler struct {
	assets map[string]*asset
}

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "the console answers GET only")
		return
	}
	var a *asset
	switch {
	case r.URL.Path == "/":
		a = h.assets["index.html"]
	case strings.HasPrefix(r.URL.Path, AssetPrefix):
		// index.html is the page at "/", not an asset of its own.
		if name := strings.TrimPrefix(r.URL.Path, AssetPrefix); name != "index.html" {
			a = h.assets[name]
		}
	}
	if a == nil {
		writeError(w, http.StatusNotFound, errcode.NotFound, "no route for "+r.Method+" "+r.URL.Path)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("ETag", a.etag)
	// Revalidate every time: the files change with the binary, and a 304
	// costs a round trip on loopback.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
}

// writeError answers with the bridge's JSON error shape
// {"error":{"code","message"}}.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"error": map[string]string{"code": code, "message": message}})
}
