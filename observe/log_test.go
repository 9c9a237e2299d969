package observe

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestRedactingLogger: a captured log line never holds the value of a
// sensitive attribute, nor of a sensitive key inside a map or header.
func TestRedactingLogger(t *testing.T) {
	t.Parallel()
	for _, format := range []string{LogText, LogJSON} {
		var buf bytes.Buffer
		log, err := NewRedactingLogger(&buf, format, "debug", []string{"password", "authorization", "token"})
		if err != nil {
			t.Fatal(err)
		}
		log.Info("login", "user", "ada", "Password", "hunter2",
			"data", map[string]any{"nested": map[string]any{"TOKEN": "tok-123"}, "ok": true},
			"headers", http.Header{"Authorization": {"Bearer sk-abc"}, "Accept": {"text/plain"}},
			slog.Group("req", slog.String("authorization", "Bearer sk-def")))
		out := buf.String()
		for _, secret := range []string{"hunter2", "tok-123", "sk-abc", "sk-def"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s log leaks %q: %s", format, secret, out)
			}
		}
		for _, kept := range []string{"ada", "text/plain", "[REDACTED]"} {
			if !strings.Contains(out, kept) {
				t.Errorf("%s log lacks %q: %s", format, kept, out)
			}
		}
	}
}
