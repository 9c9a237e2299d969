package aguihttp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/a2a-agui-bridge/bridge/agui"
)

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
	// Team is set for a team: its strategy and members.
	Team *TeamInfo `json:"team,omitempty"`
}

// TeamInfo describes a team behind one endpoint.
type TeamInfo struct {
	Strategy string       `json:"strategy"`
	Members  []TeamMember `json:"members"`
}

// TeamMember is one member of a team and its health.
type TeamMember struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Health      Health `json:"health"`
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
	// When the card was last fetched and last changed, and when it is
	// checked again.
	LastCardFetch  time.Time `json:"lastCardFetch,omitzero"`
	LastCardChange time.Time `json:"lastCardChange,omitzero"`
	CardFreshUntil time.Time `json:"cardFreshUntil,omitzero"`
}

// Catalog lists the configured agents.
type Catalog interface {
	// Has reports whether name is a configured agent, without I/O.
	Has(name string) bool
	Agents(ctx context.Context) []AgentInfo
	Agent(ctx context.Context, name string) (AgentInfo, bool)
	// Ready reports the health of what runs need: the store and each
	// agent. It should answer within a few seconds: probes call it often.
	Ready(ctx context.Context) Readiness
}

// Readiness is what GET /readyz reports. The bridge is ready when its store
// answers and at least one of its agents can be reached (or it has none):
// one agent being down makes only that agent's runs fail, which is no
// reason for a load balancer to take the whole bridge out of service.
type Readiness struct {
	Store  Health        `json:"store"`
	Agents []AgentHealth `json:"agents"`
}

// AgentHealth is one agent's health in Readiness.
type AgentHealth struct {
	Name string `json:"name"`
	Health
	// Cause is, for an unusable agent, the URL the bridge tried and why it
	// failed (a dial error, an HTTP status): for the operator's log only,
	// never sent, since it names internal hosts.
	Cause string `json:"-"`
}

// Ready applies the rule above.
func (r Readiness) Ready() bool {
	if r.Store.Status != HealthOK {
		return false
	}
	if len(r.Agents) == 0 {
		return true
	}
	for _, a := range r.Agents {
		if a.Status == HealthOK {
			return true
		}
	}
	return false
}

// Health statuses.
const (
	HealthOK          = "ok"
	HealthUnavailable = "unavailable"
)

// Gauge counts open connections; prometheus.Gauge satisfies it.
type Gauge interface {
	Inc()
	Dec()
}

// Threads reads, follows and cancels threads. The views it returns are
// JSON values; errors may implement StatusCoder.
type Threads interface {
	Thread(ctx context.Context, agent, threadID string) (any, error)
	Cancel(ctx context.Context, agent, threadID string) (any, error)
	// Follow streams the thread's journal after the sequence number after,
	// then the run in progress live until it ends.
	Follow(ctx context.Context, agent, threadID string, after int64) (Stream, error)
	// Poll returns the journal after after (waiting up to wait for the
	// first event while a run is in progress).
	Poll(ctx context.Context, agent, threadID string, after int64, wait time.Duration) (*Poll, error)
}

// ThreadLife lists and deletes the caller's threads; Options.Threads
// may implement it (else those routes answer 404).
type ThreadLife interface {
	// ListThreads lists the caller's threads on agent ("": every agent).
	ListThreads(ctx context.Context, agent, cursor string, limit int) (any, error)
	DeleteThread(ctx context.Context, agent, threadID string) error
}

// Poll is a long-poll answer: the envelopes after the asked sequence
// number, the number to ask after next, and whether the thread is at rest
// (no run in progress, nothing more journaled).
type Poll struct {
	Events []agui.Envelope
	Next   int64
	Done   bool
}

// Options configure the handler.
type Options struct {
	Runner  Runner
	Catalog Catalog
	Threads Threads
	Logger  *slog.Logger
	// MaxBodyBytes bounds a run request body (413 above it). Default 1 MiB.
	MaxBodyBytes int64
	// BodyReadTimeout bounds the time any request's body may take to
	// arrive; a slower one is answered 400 and its connection closed.
	// Default 30s.
	BodyReadTimeout time.Duration
	// KeepAlive is the interval of SSE keep-alive comments. Default 15s.
	KeepAlive time.Duration
	// WriteTimeout bounds one WebSocket write to a slow client, which is
	// then dropped (it can come back and replay). Default 30s. (An SSE
	// write is bounded by SlowClientTimeout.)
	WriteTimeout time.Duration
	// CORSOrigins lists origins allowed to call the bridge from a browser;
	// "*" allows any.
	CORSOrigins []string
	// QueueSize bounds the events waiting to be written to one WebSocket
	// connection. Default 256. (An SSE stream has no queue: the run's
	// journal is its buffer, see writeSSE.)
	QueueSize int
	// SlowClientTimeout is how long a client may leave the bridge's
	// writes untaken — a WebSocket connection's queue full, an SSE write
	// blocked — before it is dropped (it can reconnect and resume).
	// Default 10s.
	SlowClientTimeout time.Duration
	// WSReadLimit bounds one WebSocket message from a client (larger ones
	// close the connection with 1009). Default MaxBodyBytes + 4 KiB.
	WSReadLimit int64
	// WSMaxStreams bounds the runs and subscriptions one WebSocket
	// connection carries at once, MaxPrincipalStreams those of one
	// principal over all its connections; above either a run or subscribe
	// frame is refused with RUN_ERROR too_many_streams. Defaults 32 and 4096.
	WSMaxStreams        int
	MaxPrincipalStreams int
	// WSPingInterval is how often the bridge pings a WebSocket client; a
	// client silent for twice as long (no pong, no frame) is dropped.
	// Default 30s.
	WSPingInterval time.Duration
	// Console, when set, serves GET / and GET /console/… (the web console);
	// every other route is unchanged. Nil: / is a 404 like any unknown path.
	Console http.Handler
	// Metrics, when set, serves GET /metrics (Prometheus). It is a route
	// like the others, behind whatever wraps the handler. Nil: 404.
	Metrics http.Handler
	// SSEStreams and WebSockets, when set, count the open SSE streams
	// (runs and thread event streams) and WebSocket connections.
	SSEStreams Gauge
	WebSockets Gauge
	// Propagator, when set, reads the caller's trace context (W3C
	// traceparent) from every request, so a run's span joins the caller's
	// trace. Nil: incoming trace headers are ignored.
	Propagator propagation.TextMapPropagator
	// Auth, when set, authenticates every request but /healthz, /readyz,
	// the console's static files and (with PublicMetrics) /metrics: 401
	// without a valid bearer credential. The principal rides in the
	// request's context (auth.PrincipalFrom). Nil: no authentication.
	Auth          Authenticator
	PublicMetrics bool
	// Allowed, when set, says whether principal may use an agent or team:
	// the others get 403 on its routes and do not see it in GET /agents.
	Allowed func(principal, agent string) bool
	// Admit, when set, is asked for every non-public request with its
	// principal ("" without auth); an error (a StatusCoder, optionally
	// with RetryAfter) refuses the request — the per-principal rate.
	Admit func(principal string) error
	// MaxMessages bounds the messages of a RunAgentInput (413
	// too_many_messages above it); MaxStateBytes bounds its state (413
	// state_too_large). Zero: no bound.
	MaxMessages   int
	MaxStateBytes int
}

// readBody reads a run request's body of at most limit bytes. ServeHTTP
// bounds the time it may take (boundBody). A body that is not read whole
// (too slow, too large, broken) closes the connection after the error
// response: net/http would otherwise read the rest of the body before
// writing that response.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		w.Header().Set("Connection", "close")
		return nil, err
	}
	return body, nil
}

// boundBody bounds the time a request's body may take to arrive, on every
// route: a read deadline from the first byte of the handler until the body
// ends, lifted then (a run's connection must stay readable while it
// streams). Before it, a run request's deadline was lifted right after a
// failed read, and net/http then read up to 256 KiB more of the body with
// no deadline before writing the error: a client sending a byte a second
// was never answered. A route that leaves its body unread (cancel) is
// answered by the deadline too, when net/http tries to drain the body.
func (h *Handler) boundBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(h.opt.BodyReadTimeout)) != nil {
		return
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
}

// deadlineBody lifts the connection's read deadline once the body ends.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

type Handler struct {
	opt Options
	mux *http.ServeMux

	wsMu      sync.Mutex
	wsConns   map[*wsConn]struct{}
	wsClosing bool
	wsStreams map[string]int // open WebSocket streams by principal
}

// New returns the bridge's HTTP handler.
func New(opt Options) *Handler {
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = 1 << 20
	}
	if opt.KeepAlive <= 0 {
		opt.KeepAlive = 15 * time.Second
	}
	if opt.WriteTimeout <= 0 {
		opt.WriteTimeout = 30 * time.Second
	}
	if opt.QueueSize <= 0 {
		opt.QueueSize = 256
	}
	if opt.SlowClientTimeout <= 0 {
		opt.SlowClientTimeout = 10 * time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.WSReadLimit <= 0 {
		opt.WSReadLimit = opt.MaxBodyBytes + 4<<10 // a run frame wraps a RunAgentInput
	}
	if opt.WSPingInterval <= 0 {
		opt.WSPingInterval = 30 * time.Second
	}
	if opt.BodyReadTimeout <= 0 {
		opt.BodyReadTimeout = 30 * time.Second
	}
	if opt.WSMaxStreams <= 0 {
		opt.WSMaxStreams = 32
	}
	if opt.MaxPrincipalStreams <= 0 {
		opt.MaxPrincipalStreams = 4096
	}
	h := &Handler{opt: opt, mux: http.NewServeMux(), wsConns: make(map[*wsConn]struct{}), wsStreams: map[string]int{}}
	h.mux.HandleFunc("POST /agents/{name}", h.run)
	h.mux.HandleFunc("GET /agents", h.listAgents)
	h.mux.HandleFunc("GET /agents/{name}", h.getAgent)
	h.mux.HandleFunc("GET /agents/{name}/threads/{threadId}", h.thread)
	h.mux.HandleFunc("GET /agents/{name}/threads", h.listThreads)
	h.mux.HandleFunc("GET /threads", h.listThreads)
	h.mux.HandleFunc("DELETE /agents/{name}/threads/{threadId}", h.deleteThread)
	h.mux.HandleFunc("POST /agents/{name}/threads/{threadId}/cancel", h.cancel)
	h.mux.HandleFunc("GET /agents/{name}/threads/{threadId}/events", h.events)
	h.mux.HandleFunc("GET /agents/{name}/ws", h.websocket)
	h.mux.HandleFunc("GET /healthz", h.healthz)
	h.mux.HandleFunc("GET /readyz", h.readyz)
	if opt.Metrics != nil {
		h.mux.Handle("GET /metrics", opt.Metrics)
	}
	if opt.Console != nil {
		h.mux.Handle("GET /{$}", opt.Console)
		h.mux.Handle("GET /console/", opt.Console)
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		refuse(w, agui.CodeNotFound, "no route for "+r.Method+" "+r.URL.Path)
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.boundBody(w, r)
	if h.cors(w, r) {
		return
	}
	if r = h.admit(w, r); r == nil {
		return
	}
	if p := h.opt.Propagator; p != nil {
		r = r.WithContext(p.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
	}
	h.mux.ServeHTTP(w, r)
}

// cors answers preflights and sets the allow headers for listed origins; it
// reports whether the request was a preflight it answered.
func (h *Handler) cors(w http.ResponseWriter, r *http.Request) bool {
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
func (h *Handler) run(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !h.agentRoute(w, r, name) {
		return
	}
	// A JSON content type forces a browser's CORS preflight; a text/plain
	// POST would skip it (DESIGN.md, HTTP).
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		refuse(w, agui.CodeUnsupportedMediaType, "run requests must be Content-Type: application/json")
		return
	}
	body, err := readBody(w, r, h.opt.MaxBodyBytes)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			refuse(w, agui.CodeBodyTooLarge, "the request body is larger than the limit")
			return
		}
		refuse(w, agui.CodeInvalidInput, "reading the request body failed")
		return
	}
	in, err := agui.DecodeRunAgentInput(body)
	if err != nil {
		refuse(w, agui.CodeInvalidInput, err.Error())
		return
	}
	if code, msg := h.checkInput(in); code != "" {
		refuse(w, code, msg)
		return
	}
	stream, err := h.opt.Runner.StartRun(r.Context(), name, in)
	if err != nil {
		var sc StatusCoder
		if errors.As(err, &sc) {
			if sc.HTTPStatus() >= 500 {
				h.opt.Logger.Warn("run refused", "agent", name, "thread_id", in.ThreadID, "run_id", in.RunID, "err", err)
			}
			h.writeStatusError(w, err, "")
			return
		}
		h.opt.Logger.Error("start run", "agent", name, "thread_id", in.ThreadID, "run_id", in.RunID, "err", err)
		refuse(w, agui.CodeInternal, "the bridge could not start the run")
		return
	}
	h.writeSSE(w, r, stream, true)
}

func (h *Handler) listAgents(w http.ResponseWriter, r *http.Request) {
	agents := h.opt.Catalog.Agents(r.Context())
	if h.opt.Allowed != nil {
		p := principalOf(r)
		agents = slices.DeleteFunc(agents, func(a AgentInfo) bool { return !h.opt.Allowed(p, a.Name) })
	}
	if agents == nil {
		agents = []AgentInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": agents})
}

func (h *Handler) getAgent(w http.ResponseWriter, r *http.Request) {
	if !h.agentRoute(w, r, r.PathValue("name")) {
		return
	}
	info, ok := h.opt.Catalog.Agent(r.Context(), r.PathValue("name"))
	if !ok {
		refuse(w, agui.CodeUnknownAgent, "no agent named "+quote(r.PathValue("name")))
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// thread serves the thread snapshot: messages, state, pending interrupts
// and the current task.
func (h *Handler) thread(w http.ResponseWriter, r *http.Request) {
	if !h.agentRoute(w, r, r.PathValue("name")) {
		return
	}
	v, err := h.opt.Threads.Thread(r.Context(), r.PathValue("name"), r.PathValue("threadId"))
	h.answer(w, v, err)
}

// cancel cancels the thread's A2A task; repeating it is harmless.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	if !h.agentRoute(w, r, r.PathValue("name")) {
		return
	}
	v, err := h.opt.Threads.Cancel(r.Context(), r.PathValue("name"), r.PathValue("threadId"))
	h.answer(w, v, err)
}

// listThreads serves GET /agents/{name}/threads and GET /threads
// (?limit=, ?cursor=).
func (h *Handler) listThreads(w http.ResponseWriter, r *http.Request) {
	life, ok := h.opt.Threads.(ThreadLife)
	if !ok {
		refuse(w, agui.CodeNotFound, "no route for "+r.Method+" "+r.URL.Path)
		return
	}
	name := r.PathValue("name")
	if name != "" && !h.agentRoute(w, r, name) {
		return
	}
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			refuse(w, agui.CodeInvalidInput, "limit must be a whole number of threads, at least 1")
			return
		}
		limit = n
	}
	v, err := life.ListThreads(r.Context(), name, r.URL.Query().Get("cursor"), limit)
	h.answer(w, v, err)
}

// deleteThread serves DELETE /agents/{name}/threads/{threadId}: 204 for
// the owner's thread, and the same for one that does not exist or is
// another principal's.
func (h *Handler) deleteThread(w http.ResponseWriter, r *http.Request) {
	life, ok := h.opt.Threads.(ThreadLife)
	if !ok {
		refuse(w, agui.CodeNotFound, "no route for "+r.Method+" "+r.URL.Path)
		return
	}
	if !h.agentRoute(w, r, r.PathValue("name")) {
		return
	}
	if err := life.DeleteThread(r.Context(), r.PathValue("name"), r.PathValue("threadId")); err != nil {
		h.writeStatusError(w, err, "the bridge could not delete the thread")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxPollWait bounds a long poll's wait, so proxies do not cut it.
const maxPollWait = 60 * time.Second

// pollWait reads a long poll's ?wait= (seconds; "" is 0). The cap is
// taken on the seconds, before they become a Duration: 1e10 seconds
// overflowed int64 nanoseconds into a negative wait, and the poll answered
// at once (issue 33 item 8). NaN and infinities are refused.
func pollWait(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
		return 0, errors.New("wait must be a finite number of seconds >= 0")
	}
	return time.Duration(min(secs, maxPollWait.Seconds()) * float64(time.Second)), nil
}

// events serves a thread's journal: as SSE (replay after Last-Event-ID or
// ?after=, then the run in progress live until it ends), or, for a client
// that asks for application/json, as one long-poll answer
// {"events":[…],"next":<seq>,"done":<bool>} that waits up to ?wait=
// seconds for the first new event.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	name, thread := r.PathValue("name"), r.PathValue("threadId")
	if !h.agentRoute(w, r, name) {
		return
	}
	after, err := resumePoint(r)
	if err != nil {
		refuse(w, agui.CodeInvalidInput, err.Error())
		return
	}
	if wantsJSON(r) {
		wait, err := pollWait(r.URL.Query().Get("wait"))
		if err != nil {
			refuse(w, agui.CodeInvalidInput, err.Error())
			return
		}
		p, err := h.opt.Threads.Poll(r.Context(), name, thread, after, wait)
		if err != nil {
			h.answer(w, nil, err)
			return
		}
		writePoll(w, p)
		return
	}
	s, err := h.opt.Threads.Follow(r.Context(), name, thread, after)
	if err != nil {
		h.answer(w, nil, err)
		return
	}
	h.writeSSE(w, r, s, false)
}

// resumePoint is where a client resumes a thread's journal: ?after= when
// given, else the SSE Last-Event-ID header, else the start.
func resumePoint(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("after")
	if v == "" {
		v = r.Header.Get("Last-Event-ID")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("after / Last-Event-ID must be a journal sequence number (an integer >= 0)")
	}
	return n, nil
}

// wantsJSON reports a client that asks for application/json rather than
// an event stream.
func wantsJSON(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/event-stream")
}

// writePoll writes a long-poll answer; its envelopes are written as the
// journal holds their events.
func writePoll(w http.ResponseWriter, p *Poll) {
	b := []byte(`{"events":[`)
	for i, env := range p.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = agui.AppendEnvelopeJSON(b, env)
	}
	b = append(b, `],"next":`...)
	b = strconv.AppendInt(b, p.Next, 10)
	b = append(b, `,"done":`...)
	b = strconv.AppendBool(b, p.Done)
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (h *Handler) answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		h.writeStatusError(w, err, "the bridge could not answer")
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (h *Handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when the bridge can serve runs (Readiness.Ready),
// else 503 with the bridge's error body; both list the store's and every
// agent's health.
func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	rd := h.opt.Catalog.Ready(r.Context())
	if rd.Agents == nil {
		rd.Agents = []AgentHealth{}
	}
	if rd.Ready() {
		writeJSON(w, http.StatusOK, struct {
			Status string `json:"status"`
			Readiness
		}{"ready", rd})
		return
	}
	msg := "every agent is unreachable"
	if rd.Store.Status != HealthOK {
		msg = "the bridge's store is not available"
	}
	// Name the agents and why each is down: "every agent is unreachable"
	// alone leaves the operator to guess which URL to look at.
	var down []string
	for _, a := range rd.Agents {
		if a.Status != HealthOK {
			down = append(down, a.Name+": "+cmp.Or(a.Cause, a.Error))
		}
	}
	h.opt.Logger.Warn("not ready", "reason", msg, "store_error", rd.Store.Error, "agents", strings.Join(down, "; "))
	writeJSON(w, http.StatusServiceUnavailable, struct {
		Status string            `json:"status"`
		Error  map[string]string `json:"error"`
		Readiness
	}{agui.CodeNotReady, map[string]string{"code": agui.CodeNotReady, "message": msg}, rd})
}

// checkInput applies the input limits to a decoded RunAgentInput: the
// code and message of the first one it breaks, or "".
func (h *Handler) checkInput(in *agui.RunAgentInput) (string, string) {
	if m := h.opt.MaxMessages; m > 0 && len(in.Messages) > m {
		return agui.CodeTooManyMessages,
			"the run carries " + strconv.Itoa(len(in.Messages)) + " messages; the limit is " + strconv.Itoa(m)
	}
	if m := h.opt.MaxStateBytes; m > 0 && len(in.State) > m {
		return agui.CodeStateTooLarge,
			"the run's state is " + strconv.Itoa(len(in.State)) + " bytes; the limit is " + strconv.Itoa(m)
	}
	return "", ""
}

// refuse answers a request the bridge turns down with code (its HTTP
// status from agui's table of codes) and message.
func refuse(w http.ResponseWriter, code, message string) {
	writeError(w, agui.HTTPStatus(code), code, message)
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
