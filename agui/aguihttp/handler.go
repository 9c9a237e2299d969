package aguihttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// Stream is a started run whose encoded AG-UI events can be read, from
// RUN_STARTED to the terminal event.
type Stream interface {
	Events(ctx context.Context) iter.Seq2[[]byte, error]
}

// Runner starts runs. Errors it returns before the stream starts may
// implement StatusCoder to choose the HTTP status and error code.
type Runner interface {
	StartRun(ctx context.Context, agent string, in *agui.RunAgentInput) (Stream, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, agent string, in *agui.RunAgentInput) (Stream, error)

// StartRun implements Runner.
func (f RunnerFunc) StartRun(ctx context.Context, agent string, in *agui.RunAgentInput) (Stream, error) {
	return f(ctx, agent, in)
}

// StatusCoder is implemented by errors that know their HTTP status, stable
// error code and the message that is safe to show the client.
type StatusCoder interface {
	HTTPStatus() int
	ErrorCode() string
	PublicMessage() string
}

// AgentInfo describes one agent for GET /agents and GET /agents/{name}.
type AgentInfo struct {
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Skills       []Skill        `json:"skills"`
	Capabilities map[string]any `json:"capabilities"`
	Health       Health         `json:"health"`
}

// Skill is one skill from the agent's card.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
}

// Health is what the bridge knows of an agent's reachability.
type Health struct {
	Status string `json:"status"` // "ok" | "unavailable"
	Error  string `json:"error,omitempty"`
	// Binding is the A2A transport and protocol version in use.
	Binding string `json:"binding,omitempty"`
}

// Catalog lists the configured agents.
type Catalog interface {
	// Has reports whether name is a configured agent, without I/O.
	Has(name string) bool
	Agents(ctx context.Context) []AgentInfo
	Agent(ctx context.Context, name string) (AgentInfo, bool)
	// Ready reports whether the bridge can serve runs (store reachable).
	Ready(ctx context.Context) error
}

// Threads reads and cancels threads. The views it returns are JSON values;
// errors may implement StatusCoder.
type Threads interface {
	Thread(ctx context.Context, agent, threadID string) (any, error)
	Cancel(ctx context.Context, agent, threadID string) (any, error)
}

// Options configure the handler.
type Options struct {
	Runner  Runner
	Catalog Catalog
	Threads Threads
	Logger  *slog.Logger
	// MaxBodyBytes bounds a run request body (413 above it). Default 1 MiB.
	MaxBodyBytes int64
	// KeepAlive is the interval of SSE keep-alive comments. Default 15s.
	KeepAlive time.Duration
	// WriteTimeout bounds one write to a slow client, which is then
	// dropped (it can come back and replay). Default 30s.
	WriteTimeout time.Duration
	// CORSOrigins lists origins allowed to call the bridge from a browser;
	// "*" allows any.
	CORSOrigins []string
}

// bodyReadTimeout bounds reading a run request's body.
const bodyReadTimeout = 30 * time.Second

type handler struct {
	opt Options
	mux *http.ServeMux
}

// New returns the bridge's HTTP handler.
func New(opt Options) http.Handler {
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = 1 << 20
	}
	if opt.KeepAlive <= 0 {
		opt.KeepAlive = 15 * time.Second
	}
	if opt.WriteTimeout <= 0 {
		opt.WriteTimeout = 30 * time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{opt: opt, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST /agents/{name}", h.run)
	h.mux.HandleFunc("GET /agents", h.listAgents)
	h.mux.HandleFunc("GET /agents/{name}", h.getAgent)
	h.mux.HandleFunc("GET /agents/{name}/threads/{threadId}", h.thread)
	h.mux.HandleFunc("POST /agents/{name}/threads/{threadId}/cancel", h.cancel)
	h.mux.HandleFunc("GET /healthz", h.healthz)
	h.mux.HandleFunc("GET /readyz", h.readyz)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path)
	})
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cors(w, r) {
		return
	}
	h.mux.ServeHTTP(w, r)
}

// cors answers preflights and sets the allow headers for listed origins; it
// reports whether the request was a preflight it answered.
func (h *handler) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(h.opt.CORSOrigins) == 0 {
		return false
	}
	if !slices.Contains(h.opt.CORSOrigins, "*") && !slices.Contains(h.opt.CORSOrigins, origin) {
		return false
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Add("Vary", "Origin")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, Last-Event-ID")
		hd.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}

// run serves POST /agents/{name}: one AG-UI run as SSE.
func (h *handler) run(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !h.opt.Catalog.Has(name) {
		writeError(w, http.StatusNotFound, "unknown_agent", "no agent named "+quote(name))
		return
	}
	// A JSON content type forces a browser's CORS preflight; a text/plain
	// POST would skip it (DESIGN.md, HTTP).
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "run requests must be Content-Type: application/json")
		return
	}
	// Bound the time to send the body (slow uploads), then lift the
	// deadline: the connection's read side must stay open for the stream.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opt.MaxBodyBytes))
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "the request body is larger than the limit")
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_input", "reading the request body failed")
		return
	}
	in, err := agui.DecodeRunAgentInput(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_input", err.Error())
		return
	}
	stream, err := h.opt.Runner.StartRun(r.Context(), name, in)
	if err != nil {
		var sc StatusCoder
		if errors.As(err, &sc) {
			if sc.HTTPStatus() >= 500 {
				h.opt.Logger.Warn("run refused", "agent", name, "thread_id", in.ThreadID, "run_id", in.RunID, "err", err)
			}
			writeError(w, sc.HTTPStatus(), sc.ErrorCode(), sc.PublicMessage())
			return
		}
		h.opt.Logger.Error("start run", "agent", name, "thread_id", in.ThreadID, "run_id", in.RunID, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the bridge could not start the run")
		return
	}
	h.writeSSE(w, r, stream)
}

// writeSSE copies the run's events to the client as SSE frames until the
// terminal event, the client leaving, or a write failing. Leaving does not
// stop the run: its events stay in the thread's journal.
func (h *handler) writeSSE(w http.ResponseWriter, r *http.Request, stream Stream) {
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(h.opt.WriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte(agui.KeepAliveFrame)) {
		return
	}
	frame := func(ev []byte) []byte {
		f := make([]byte, 0, len(ev)+8)
		f = append(f, "data: "...)
		f = append(f, ev...)
		return append(f, "\n\n"...)
	}
	terminated := false
	pump(r.Context(), stream, h.opt.KeepAlive, func(ev []byte) bool {
		terminated = terminated || isTerminal(ev)
		return write(frame(ev))
	}, func() bool { return write([]byte(agui.KeepAliveFrame)) })
	if !terminated && r.Context().Err() == nil {
		// The run's events stopped before its terminal event (the store
		// failed): every stream still ends exactly once.
		h.opt.Logger.Error("run stream ended without a terminal event")
		if b, err := agui.Marshal(&agui.RunError{Code: "internal", Message: "the bridge lost the end of this run"}); err == nil {
			write(frame(b))
		}
	}
}

// isTerminal spots RUN_FINISHED/RUN_ERROR in an encoded event; agui.Marshal
// writes "type" first, so a prefix check is enough.
func isTerminal(ev []byte) bool {
	return bytes.HasPrefix(ev, []byte(`{"type":"RUN_FINISHED"`)) || bytes.HasPrefix(ev, []byte(`{"type":"RUN_ERROR"`))
}

// pump is the one place where a run's event iterator becomes a channel: it
// selects over events, keep-alive ticks and the client's context, so the
// same loop can serve SSE and WebSocket framers.
func pump(ctx context.Context, stream Stream, keepAlive time.Duration, send func([]byte) bool, ping func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan []byte, 64)
	go func() {
		defer close(events)
		for ev, err := range stream.Events(ctx) {
			if err != nil {
				return
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok || !send(ev) {
				return
			}
			tick.Reset(keepAlive)
		case <-tick.C:
			if !ping() {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func (h *handler) listAgents(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"agents": h.opt.Catalog.Agents(r.Context())})
}

func (h *handler) getAgent(w http.ResponseWriter, r *http.Request) {
	info, ok := h.opt.Catalog.Agent(r.Context(), r.PathValue("name"))
	if !ok {
		writeError(w, http.StatusNotFound, "unknown_agent", "no agent named "+quote(r.PathValue("name")))
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// thread serves the thread snapshot: messages, state, pending interrupts
// and the current task.
func (h *handler) thread(w http.ResponseWriter, r *http.Request) {
	v, err := h.opt.Threads.Thread(r.Context(), r.PathValue("name"), r.PathValue("threadId"))
	h.answer(w, v, err)
}

// cancel cancels the thread's A2A task; repeating it is harmless.
func (h *handler) cancel(w http.ResponseWriter, r *http.Request) {
	v, err := h.opt.Threads.Cancel(r.Context(), r.PathValue("name"), r.PathValue("threadId"))
	h.answer(w, v, err)
}

func (h *handler) answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		var sc StatusCoder
		if errors.As(err, &sc) {
			writeError(w, sc.HTTPStatus(), sc.ErrorCode(), sc.PublicMessage())
			return
		}
		h.opt.Logger.Error("thread request", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the bridge could not answer")
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (h *handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h *handler) readyz(w http.ResponseWriter, r *http.Request) {
	if err := h.opt.Catalog.Ready(r.Context()); err != nil {
		h.opt.Logger.Warn("not ready", "err", err)
		writeError(w, http.StatusServiceUnavailable, "not_ready", "the bridge's store is not available")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// writeError answers with the bridge's JSON error shape
// {"error":{"code","message"}}.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
