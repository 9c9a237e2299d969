package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/google/uuid"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/agui/aguihttp"
	"github.com/a2a-agui-bridge/bridge/auth"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/console"
	"github.com/a2a-agui-bridge/bridge/limits"
	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/store/boltstore"
	"github.com/a2a-agui-bridge/bridge/tasks/store/redisstore"
	"github.com/a2a-agui-bridge/bridge/tasks/threadview"
)

// instruments are what Serve makes before wiring the bridge: metrics,
// tracing and the authenticator; the zero value has none (a nil
// *observe.Tracing is tracing off, a nil authn is no authentication).
type instruments struct {
	metrics *observe.Metrics
	tracing *observe.Tracing
	authn   *auth.Authenticator
}

// CheckExposure refuses to serve without authentication on an address
// other machines can reach, unless the config opts out explicitly
// (auth.mode: none): an open bridge lets anyone run its agents and read
// every thread. Serve leaves it to its caller, which runs it before
// anything opens (bridge serve does; bridge demo, on loopback by default,
// does not); a reload runs it on the new config.
func CheckExposure(cfg *config.Config) error {
	if cfg.Auth.Enabled() || cfg.Auth.Mode == config.AuthNone || loopback(cfg.Listen) {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without authentication: configure auth.apiKeys or auth.jwt, "+
		"listen on a loopback address (127.0.0.1), or write auth: {mode: none} to serve openly", cfg.Listen)
}

// loopback reports whether addr (host:port) accepts only local
// connections. An empty host (":8080") listens on every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// newAuthenticator builds the authenticator the config asks for; nil when
// auth is off. A JWKS URL is fetched here, so a bridge that cannot read its
// keys does not start.
func newAuthenticator(ctx context.Context, c config.Auth) (*auth.Authenticator, error) {
	if !c.Enabled() {
		return nil, nil
	}
	opt := auth.Options{}
	for _, k := range c.APIKeys {
		key := auth.Key{Principal: k.Principal}
		if k.Key != "" {
			key.Digest = sha256.Sum256([]byte(k.Key))
		} else {
			b, err := hex.DecodeString(k.SHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("auth.apiKeys: bad sha256") // Validate refused it already
			}
			copy(key.Digest[:], b)
		}
		opt.Keys = append(opt.Keys, key)
	}
	if c.JWT.JWKS != "" {
		opt.JWT = &auth.JWTOptions{JWKS: c.JWT.JWKS, Issuer: c.JWT.Issuer, Audience: c.JWT.Audience,
			Leeway: time.Duration(c.JWT.Leeway), Refresh: time.Duration(c.JWT.Refresh)}
	}
	return auth.New(ctx, opt)
}

// allowLists returns the allow-list check of the agents and teams that
// have one (nil when none has).
func allowLists(cfg *config.Config) func(principal, agent string) bool {
	lists := map[string][]string{}
	for _, a := range cfg.Agents {
		if a.Allow != nil {
			lists[a.Name] = a.Allow
		}
	}
	for _, t := range cfg.Teams {
		if t.Allow != nil {
			lists[t.Name] = t.Allow
		}
	}
	if len(lists) == 0 {
		return nil
	}
	return func(principal, agent string) bool {
		list, ok := lists[agent]
		return !ok || slices.Contains(list, principal)
	}
}

// bridge is the wired bridge: the run service and its HTTP handler.
type bridge struct {
	svc *tasks.Service
	// handler serves every request with the current config generation's
	// handler (reload.go); Shutdown ends the streams of every generation.
	handler *live
	// public is handler as served: it keeps each request's Authorization
	// for the agents that forward the caller's token.
	public http.Handler
	// remotes are the first generation's agents (Serve checks their setup).
	remotes map[string]*remoteAgent
	// limiter and inst stay the same across reloads; the limiter's caps
	// change with them.
	limiter *limits.Limiter
	store   tasks.Store
	log     *slog.Logger
	inst    instruments
}

func (b *bridge) closeAgents() { b.handler.close() }

// build wires the configured agents, the run service and the HTTP handler
// over store, with the metrics and tracing of inst.
func build(cfg *config.Config, store tasks.Store, log *slog.Logger, inst instruments) *bridge {
	g := newGeneration(cfg, nil, inst)
	// Memory and embedded stores have this process as their only writer.
	exclusive := cfg.Store.Kind == config.StoreMemory || cfg.Store.Kind == config.StoreEmbedded
	limiter := limits.New(limiterOptions(cfg))
	svc := tasks.NewService(tasks.Options{Store: store, Agents: g.specs, Teams: g.teamSpecs, Logger: log, ExclusiveStore: exclusive,
		Tracer: inst.tracing.Tracer(), Admission: limiter, Lease: cfg.Store.Lease.Std(), Instance: instanceID()})
	b := &bridge{svc: svc, handler: &live{}, remotes: g.remotes, limiter: limiter, store: store, log: log, inst: inst}
	b.wire(g)
	b.handler.install(g)
	b.public = b.handler
	return b
}

func limiterOptions(cfg *config.Config) limits.Options {
	return limits.Options{
		RequestsPerSecond: cfg.Limits.PerPrincipal.RequestsPerSecond,
		Burst:             int(cfg.Limits.PerPrincipal.Burst),
		RunsPerPrincipal:  int(cfg.Limits.PerPrincipal.ConcurrentRuns),
		Runs:              int(cfg.Limits.ConcurrentRuns),
	}
}

// wire builds generation g's HTTP handler over the run service.
func (b *bridge) wire(g *generation) {
	cfg, svc, inst := g.cfg, b.svc, g.inst
	svc.SetMaxThreads(int(cfg.Limits.PerPrincipal.MaxThreads))
	cat := &catalog{agents: g.remotes, teams: g.teams, store: b.store, log: b.log}
	allowed := allowLists(cfg)
	opts := aguihttp.Options{
		Runner: aguihttp.RunnerFunc(func(ctx context.Context, agent string, in *agui.RunAgentInput) (aguihttp.Stream, error) {
			return svc.StartRun(ctx, agent, in)
		}),
		Catalog:             cat,
		Threads:             threads{svc, cat, allowed},
		Logger:              b.log,
		MaxBodyBytes:        cfg.Server.MaxBodyBytes,
		KeepAlive:           time.Duration(cfg.Server.KeepAlive),
		CORSOrigins:         cfg.Server.CORSOrigins,
		QueueSize:           int(cfg.Server.ClientQueue),
		SlowClientTimeout:   time.Duration(cfg.Server.SlowClientTimeout),
		WSReadLimit:         cfg.Server.WSReadLimit,
		WSMaxStreams:        cfg.Server.WSMaxStreams,
		MaxPrincipalStreams: cfg.Server.WSMaxStreamsPerPrincipal,
		WSPingInterval:      time.Duration(cfg.Server.WSPingInterval),
		Console:             console.Handler(),
		Propagator:          inst.tracing.Propagator(),
		PublicMetrics:       cfg.Metrics.Public,
		Allowed:             allowed,
		MaxMessages:         int(cfg.Limits.MaxMessages),
		MaxStateBytes:       int(cfg.Limits.MaxStateBytes),
	}
	if inst.authn != nil {
		opts.Auth = inst.authn // never a typed nil inside the interface
	}
	if cfg.Limits.PerPrincipal.RequestsPerSecond > 0 {
		opts.Admit = b.limiter.Allow
	}
	if m := inst.metrics; m != nil {
		opts.Metrics = m.Handler()
		opts.SSEStreams = m.Streams(observe.TransportSSE)
		opts.WebSockets = m.Streams(observe.TransportWebSocket)
	}
	g.handler = aguihttp.New(opts)
	g.public = withCallerAuthorization(g.handler, inst.authn)
}

// withCallerAuthorization puts the request's Authorization header in its
// context, where the a2a package finds it for the calls of the run it
// starts. Only agents with auth.forwardCallerToken send it on; it is never
// logged. The run service keeps it for the run's detached calls. One of the
// bridge's own API keys is not passed on: it opens the bridge, and an agent
// has no use for it.
func withCallerAuthorization(next http.Handler, authn *auth.Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Authorization"); v != "" {
			if token, ok := auth.BearerToken(v); !ok || authn == nil || !authn.IsAPIKey(token) {
				r = r.WithContext(a2a.WithCallerAuthorization(r.Context(), v))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// threads adapts the run service's thread views to the HTTP handler; the
// lists are read from the store, over the agents and teams of cat that
// the caller may use (allowed; nil: all).
type threads struct {
	svc     *tasks.Service
	cat     *catalog
	allowed func(principal, agent string) bool
}

func (t threads) Thread(ctx context.Context, agent, threadID string) (any, error) {
	v, err := t.svc.Thread(ctx, agent, threadID)
	if err != nil {
		return nil, err
	}
	return spellStates(v), nil
}

func (t threads) Cancel(ctx context.Context, agent, threadID string) (any, error) {
	v, err := t.svc.Cancel(ctx, agent, threadID)
	if err != nil {
		return nil, err
	}
	return spellStates(v), nil
}

// ListThreads lists the caller's threads on agent (one the handler found),
// or on every agent and team when agent is "". Nothing of another
// principal is ever listed. limit 0 is threadview.DefaultListLimit; above
// threadview.MaxListLimit, or a cursor no list returned, is invalid_input.
func (t threads) ListThreads(ctx context.Context, agent, cursor string, limit int) (any, error) {
	limit = cmp.Or(limit, threadview.DefaultListLimit)
	if limit > threadview.MaxListLimit {
		return nil, &tasks.Error{Code: agui.CodeInvalidInput, Message: fmt.Sprintf("limit must be between 1 and %d", threadview.MaxListLimit)}
	}
	q := store.ListQuery{Principal: auth.PrincipalFrom(ctx), Cursor: cursor, Limit: limit, Agents: []string{agent}}
	if agent == "" {
		q.Agents = append(t.cat.names(), slices.Sorted(maps.Keys(t.cat.teams))...)
		if t.allowed != nil {
			q.Agents = slices.DeleteFunc(q.Agents, func(name string) bool { return !t.allowed(q.Principal, name) })
		}
		if len(q.Agents) == 0 {
			return threadview.ListOf(store.ThreadPage{}), nil // none it may use (no filter would mean all)
		}
	}
	page, err := t.cat.store.ListThreads(ctx, q)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, &tasks.Error{Code: agui.CodeInvalidInput, Message: "cursor is not one a thread list returned", Err: err}
	}
	if err != nil {
		return nil, tasks.StoreError(err)
	}
	return threadview.ListOf(page), nil
}

func (t threads) DeleteThread(ctx context.Context, agent, threadID string) error {
	return t.svc.DeleteThread(ctx, agent, threadID)
}

// spellStates writes the view's task states as the rest of what a client
// sees spells them — "completed", as in the shared state's
// a2a.task.state and the a2a:completed step — not as the store keeps
// them (A2A v1.0's TASK_STATE_COMPLETED): one thread view, one spelling.
func spellStates(v *threadview.Thread) *threadview.Thread {
	if v.Task != nil {
		v.Task.State = taskStateName(v.Task.State)
	}
	for _, m := range v.Members {
		m.State = taskStateName(m.State)
	}
	if v.Cancel != nil {
		v.Cancel.TaskState = taskStateName(v.Cancel.TaskState)
	}
	return v
}

// taskStateName turns TASK_STATE_INPUT_REQUIRED into input_required, as
// the translator names states in steps and shared state.
func taskStateName(s string) string {
	if s == "" {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(s, "TASK_STATE_"))
}

func (t threads) Follow(ctx context.Context, agent, threadID string, after int64) (aguihttp.Stream, error) {
	return t.svc.Follow(ctx, agent, threadID, after)
}

func (t threads) Poll(ctx context.Context, agent, threadID string, after int64, wait time.Duration) (*aguihttp.Poll, error) {
	p, err := t.svc.Poll(ctx, agent, threadID, after, wait, 0)
	if err != nil {
		return nil, err
	}
	return &aguihttp.Poll{Events: p.Events, Next: p.Next, Done: p.Done}, nil
}

// Options are what Serve takes besides the config; the zero value serves
// the config as it is until ctx ends.
type Options struct {
	// Listening, when set, is called with the listener's address once the
	// bridge accepts connections (the address a listen of port 0 got).
	Listening func(net.Addr)
	// Reload, when set, reloads the config file on its triggers
	// (reload.go); nil: the config given to Serve stays.
	Reload *Reload
}

// Serve runs the bridge cfg describes (cfg is defaulted and valid, as
// config.Load returns it) until ctx ends, then shuts down gracefully: no
// new connections or runs, in-flight runs get the grace period to finish,
// the rest are cut — their streams end with
// RUN_ERROR{code:"server_shutdown"}, their A2A tasks keep running, and the
// next start takes them over and finishes them into the journal —
// WebSockets close with 1001, then the store closes. It returns nil after
// a clean shutdown, or why the bridge could not start or serve.
func Serve(ctx context.Context, cfg *config.Config, log *slog.Logger, opts Options) error {
	listening, rl := opts.Listening, opts.Reload
	tracing, err := observe.NewTracing(ctx, observe.TracingOptions{
		Exporter: cfg.Tracing.Exporter, Endpoint: cfg.Tracing.Endpoint, SampleRatio: cfg.Tracing.SampleRatio,
	})
	if err != nil {
		return err
	}
	defer func() {
		// The spans of the last runs, cut or finished during shutdown.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(ctx); err != nil {
			log.Warn("export the last spans", "err", err)
		}
	}()
	raw, err := openStore(ctx, cfg.Store)
	if err != nil {
		return err
	}
	defer raw.Close()
	metrics := observe.NewMetrics()
	store := store.Observe(raw, cmp.Or(cfg.Store.Kind, config.StoreEmbedded), metrics)
	if err := store.CountInterrupts(ctx); err != nil {
		log.Warn("count pending interrupts", "err", err)
	}
	authn, err := newAuthenticator(ctx, cfg.Auth)
	if err != nil {
		return err
	}
	if authn != nil {
		defer authn.Close()
	}
	b := build(cfg, store, log, instruments{metrics: metrics, tracing: tracing, authn: authn})
	defer b.closeAgents()
	svc, handler := b.svc, b.handler
	for _, r := range b.remotes {
		if r.setupErr != nil {
			return r.setupErr // a key file that does not load is a config error: stop at start
		}
	}
	// Every agent's card once, in the background: an agent that cannot be
	// used is named in the log, with the URL tried and the cause, at start.
	probeCtx, stopProbes := context.WithCancel(ctx)
	var probes sync.WaitGroup
	defer probes.Wait()
	defer stopProbes()
	for _, r := range b.remotes {
		probes.Go(func() { r.logStart(probeCtx, log) })
	}
	// Runs a previous process left in progress (it was stopped or killed)
	// go on where their journals end.
	if cfg.Store.Kind == config.StoreRedis {
		// Runs of instances that died are adopted by the lease scan.
		log.Info("sharing the store with other instances", "instance", svc.Instance(), "lease", cfg.Store.Lease.Std().String())
	}
	if cfg.Store.Kind == config.StoreMemory || cfg.Store.Kind == config.StoreEmbedded || cfg.Store.Kind == "" {
		if n, err := svc.Recover(ctx); err != nil {
			log.Error("take over runs left in progress", "err", err)
		} else if n > 0 {
			log.Info("took over runs left in progress", "runs", n)
		}
	}

	// The profiler's listener first: failing it leaves no public listener
	// open behind.
	if addr := os.Getenv("BRIDGE_PPROF"); addr != "" {
		stop, err := servePprof(addr, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	// No WriteTimeout or ReadTimeout: either would cut long SSE streams (an
	// expired read deadline cancels the request's context). The handler sets
	// a read deadline for the body and a deadline per write instead.
	srv := &http.Server{
		Handler:           b.public,
		ReadHeaderTimeout: time.Duration(cfg.Server.ReadHeaderTimeout),
		IdleTimeout:       time.Duration(cfg.Server.IdleTimeout),
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if listening != nil {
		listening(ln.Addr())
	}
	if rl != nil {
		rctx, stopReloads := context.WithCancel(ctx)
		var reloads sync.WaitGroup
		reloads.Go(func() { b.reloads(rctx, rl) })
		defer reloads.Wait()
		defer stopReloads()
	}
	if ttl := time.Duration(cfg.Store.Retention.IdleThreadTTL); ttl > 0 {
		sctx, stopSweep := context.WithCancel(ctx)
		var sweeping sync.WaitGroup
		sweeping.Go(func() { sweepIdle(sctx, b.store, ttl, b.inst.metrics, log) })
		defer sweeping.Wait()
		defer stopSweep()
	}

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", time.Duration(cfg.Server.ShutdownGrace).String())
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(cfg.Server.ShutdownGrace))
	defer cancel()
	closed := make(chan struct{})
	go func() {
		_ = svc.Close(grace)
		// The runs ended or were cut: WebSockets write what is left and
		// close with 1001.
		short, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		handler.Shutdown(short)
		cancel()
		close(closed)
	}()
	if err := srv.Shutdown(grace); err != nil {
		// Streams still open after the grace period: their runs were cut
		// and have written their RUN_ERROR; close what remains.
		<-closed
		short, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(short); err != nil {
			_ = srv.Close()
		}
	}
	<-closed
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// servePprof serves Go's profiler (net/http/pprof) on its own listener,
// for measuring the bridge under load (BRIDGE_PPROF=127.0.0.1:6060). It is
// never on the public handler: profiles show internals.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("BRIDGE_PPROF: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("profiler listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// redisOpenTimeout bounds connecting to Redis at start: an unreachable
// server fails the start with a clear error instead of hanging it.
const redisOpenTimeout = 10 * time.Second

func openStore(ctx context.Context, c config.Store) (tasks.Store, error) {
	switch c.Kind {
	case config.StoreMemory:
		return store.NewMemoryStore(), nil
	case config.StoreEmbedded, "":
		s, err := boltstore.OpenBoltStore(c.Path)
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		return s, nil
	case config.StoreRedis:
		ctx, cancel := context.WithTimeout(ctx, redisOpenTimeout)
		defer cancel()
		s, err := redisstore.OpenRedis(ctx, redisTarget(c), redisstore.RedisOptions{
			WaitReplicas: int(c.WaitReplicas), WaitTimeout: time.Duration(c.WaitTimeout)})
		if err != nil {
			return nil, fmt.Errorf("store: %w (is Redis running, and are store.url, store.sentinel or store.cluster right?)", err)
		}
		return s, nil
	default:
		return nil, fmt.Errorf("store.kind %q is not supported by this build; use embedded, memory or redis", c.Kind)
	}
}

// redisTarget is the Redis deployment the store config names.
func redisTarget(c config.Store) redisstore.RedisTarget {
	t := redisstore.RedisTarget{URL: c.URL, Cluster: c.Cluster, Username: c.Username, Password: c.Password, TLS: c.TLS}
	if st := c.Sentinel; st.Set() {
		t.Sentinel = &redisstore.RedisSentinel{Master: st.Master, Addrs: st.Addrs,
			SentinelUsername: st.Username, SentinelPassword: st.Password, DB: int(st.DB)}
	}
	return t
}

// instanceID names this process in thread records and logs: the host name
// (a pod's name on Kubernetes), so an operator sees which instance holds a
// run, and a random suffix, so a restarted process is a new instance.
func instanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "bridge"
	}
	return host + "-" + uuid.NewString()[:8]
}
