package aguihttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/auth"
)

// Authenticator turns a bearer token into a principal; *auth.Authenticator
// satisfies it.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (string, error)
}

// wsProtocol is the WebSocket subprotocol the bridge speaks. A browser
// cannot set an Authorization header on a WebSocket, so it offers its
// token as a second subprotocol, "bearer.<token>"; the bridge answers with
// wsProtocol (or, for a client that offered only the token, echoes it, as
// browsers fail a handshake whose offered protocols all go unanswered).
const (
	wsProtocol    = "agui-bridge"
	wsTokenPrefix = "bearer."
)

// public reports the routes that need no authentication: probes, the
// console's static files (they hold no data) and, when configured,
// /metrics.
func (h *Handler) public(r *http.Request) bool {
	switch p := r.URL.Path; {
	case p == "/healthz" || p == "/readyz":
		return true
	case p == "/metrics":
		return h.opt.PublicMetrics
	case h.opt.Console != nil && r.Method == http.MethodGet && (p == "/" || strings.HasPrefix(p, "/console/")):
		return true
	}
	return false
}

// admit authenticates r (when the bridge has auth) and applies the
// principal's request rate; it answers and returns nil when r may not go
// on.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) *http.Request {
	if h.public(r) {
		return r
	}
	principal := ""
	if h.opt.Auth != nil {
		token, ok := requestToken(r)
		if !ok {
			unauthorized(w, "send Authorization: Bearer <API key or JWT>")
			return nil
		}
		p, err := h.opt.Auth.Authenticate(r.Context(), token)
		if err != nil {
			// Never log the token; the reason helps an operator tell an
			// expired JWT from a wrong key.
			h.opt.Logger.Debug("authentication failed", "path", r.URL.Path, "err", err)
			unauthorized(w, "the bearer credential is not valid")
			return nil
		}
		principal = p
		ctx := auth.WithPrincipal(r.Context(), principal)
		if l, ok := h.opt.Auth.(interface{ LegacyPrincipal(string) string }); ok {
			if old := l.LegacyPrincipal(principal); old != "" {
				ctx = auth.WithLegacyPrincipal(ctx, old)
			}
		}
		r = r.WithContext(ctx)
	}
	if h.opt.Admit != nil {
		if err := h.opt.Admit(principal); err != nil {
			h.writeStatusError(w, err, "the bridge could not admit the request")
			return nil
		}
	}
	return r
}

// requestToken finds the bearer token: the Authorization header, or, on a
// WebSocket upgrade only, a "bearer.<token>" subprotocol.
func requestToken(r *http.Request) (string, bool) {
	if v := r.Header.Get("Authorization"); v != "" {
		return auth.BearerToken(v)
	}
	if p := wsTokenProtocol(r); p != "" {
		return auth.BearerToken("Bearer " + strings.TrimPrefix(p, wsTokenPrefix))
	}
	return "", false
}

// wsTokenProtocol is the "bearer.<token>" subprotocol a WebSocket upgrade
// offers, or "".
func wsTokenProtocol(r *http.Request) string {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return ""
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); strings.HasPrefix(p, wsTokenPrefix) {
				return p
			}
		}
	}
	return ""
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="a2a-agui-bridge"`)
	refuse(w, agui.CodeUnauthenticated, msg)
}

// principalOf is the request's authenticated principal ("" without auth).
func principalOf(r *http.Request) string { return auth.PrincipalFrom(r.Context()) }

// agentRoute checks that name is an agent or team the caller may use: 404
// for an unknown one, 403 for one its allow list leaves the caller out of.
func (h *Handler) agentRoute(w http.ResponseWriter, r *http.Request, name string) bool {
	if !h.opt.Catalog.Has(name) {
		refuse(w, agui.CodeUnknownAgent, "no agent named "+quote(name))
		return false
	}
	if h.opt.Allowed != nil && !h.opt.Allowed(principalOf(r), name) {
		refuse(w, agui.CodeForbidden, "you may not use agent "+quote(name))
		return false
	}
	return true
}

// retryAfter is implemented by errors that tell the caller when to retry.
type retryAfter interface{ RetryAfter() time.Duration }

// writeStatusError answers err before a stream: its status, code and
// public message when it has them (with Retry-After when it says when to
// retry), else 500 with fallback.
func (h *Handler) writeStatusError(w http.ResponseWriter, err error, fallback string) {
	var sc StatusCoder
	if !errors.As(err, &sc) {
		h.opt.Logger.Error(fallback, "err", err)
		refuse(w, agui.CodeInternal, fallback)
		return
	}
	var ra retryAfter
	if errors.As(err, &ra) {
		secs := int64((ra.RetryAfter() + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
	}
	writeError(w, sc.HTTPStatus(), sc.ErrorCode(), sc.PublicMessage())
}
