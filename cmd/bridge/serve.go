package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"slices"
	"strings"
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
)

// cmdServe runs the bridge from a config file; its logs go to stderr in
// the config's log format and level.
func cmdServe(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	path := fs.String("config", "", "YAML config `file` (required)")
	listen := fs.String("listen", "", "`host:port` to listen on (overrides the config's listen)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" {
		return exitError{2, "serve needs --config FILE"}
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return exitError{2, err.Error()}
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	log, err := observe.NewRedactingLogger(stderr, cfg.Log.Format, cfg.Log.Level, cfg.RedactKeys)
	if err != nil {
		return exitError{2, err.Error()} // Validate already refused bad values
	}
	if err := checkExposure(cfg); err != nil {
		return err
	}
	return serve(ctx, cfg, log, func(addr net.Addr) {
		log.Info("bridge listening", "addr", addr.String(), "agents", len(cfg.Agents), "store", cfg.Store.Kind)
	})
}

// instruments are what serve makes before wiring the bridge: metrics,
// tracing and the authenticator; the zero value has none (a nil
// *observe.Tracing is tracing off, a nil authn is no authentication).
type instruments struct {
	metrics *observe.Metrics
	tracing *observe.Tracing
	authn   *auth.Authenticator
}

// checkExposure refuses to serve without authentication on an address
// other machines can reach, unless the config opts out explicitly
// (auth.mode: none): an open bridge lets anyone run its agents and read
// every thread.
func checkExposure(cfg *config.Config) error {
	if cfg.Auth.Enabled() || cfg.Auth.Mode == config.AuthNone || loopback(cfg.Listen) {
		return nil
	}
	return exitError{2, fmt.Sprintf("refusing to listen on %s without authentication: configure auth.apiKeys or auth.jwt, "+
		"listen on a loopback address (127.0.0.1), or write auth: {mode: none} to serve openly", cfg.Listen)}
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
	svc     *tasks.Service
	handler *aguihttp.Handler
	// public is handler as served: it keeps each request's Authorization
	// for the agents that forward the caller's token.
	public  http.Handler
	remotes map[string]*remoteAgent
}

func (b *bridge) closeAgents() {
	for _, r := range b.remotes {
		r.close()
	}
}

// build wires the configured agents, the run service and the HTTP handler
// over store, with the metrics and tracing of inst.
func build(cfg *config.Config, store tasks.Store, log *slog.Logger, inst instruments) *bridge {
	remotes := make(map[string]*remoteAgent, len(cfg.Agents))
	specs := make([]tasks.AgentSpec, 0, len(cfg.Agents))
	for _, a := range cfg.Agents {
		r := newRemoteAgent(a, inst)
		remotes[a.Name] = r
		var runs tasks.RunObserver // stays a nil interface without metrics
		if inst.metrics != nil {
			runs = inst.metrics.Agent(a.Name)
		}
		specs = append(specs, tasks.AgentSpec{
			Name: a.Name,
			Connect: func(ctx context.Context) (tasks.Agent, error) {
				ag, err := r.connect(ctx)
				if err != nil {
					return nil, err // never a typed nil inside the interface
				}
				return ag, nil
			},
			RunTimeout:     time.Duration(a.Timeouts.Run),
			IdleTimeout:    time.Duration(a.Timeouts.Idle),
			RequestTimeout: time.Duration(a.Timeouts.Request),
			PollInitial:    time.Duration(a.Poll.Initial),
			PollMax:        time.Duration(a.Poll.Max),
			StatusText:     statusTextPolicy(a.StatusText),
			InterruptTTL:   time.Duration(a.InterruptTTL),
			StateKey:       a.StateKey,
			MaxInlineBytes: int(cfg.Server.MaxInlineBytes),
			Observer:       runs,
			MaxEventBytes:  int(cfg.Limits.MaxEventBytes),
			MaxStateBytes:  int(cfg.Limits.MaxStateBytes),
			RedactKeys:     cfg.RedactKeys,
			// A2UI (tasks/a2ui.go): when runs activate it, the catalogs
			// announced for clients that name none, the action bound.
			A2UI:               a2uiMode(a.A2UI),
			A2UICatalogs:       a.A2UICatalogs,
			MaxA2UIActionBytes: int(cfg.Limits.MaxA2UIActionBytes),
		})
	}
	// Memory and embedded stores have this process as their only writer.
	exclusive := cfg.Store.Kind == config.StoreMemory || cfg.Store.Kind == config.StoreEmbedded
	var teamSpecs []tasks.TeamSpec
	teams := make(map[string]*team, len(cfg.Teams))
	for _, t := range cfg.Teams {
		spec := tasks.TeamSpec{Name: t.Name, Description: t.Description, Strategy: teamStrategy(t.Strategy), Members: t.Members}
		if inst.metrics != nil {
			spec.Observer = inst.metrics.Agent(t.Name)
		}
		teamSpecs = append(teamSpecs, spec)
		tm := &team{cfg: t}
		for _, m := range t.Members {
			tm.members = append(tm.members, remotes[m])
		}
		teams[t.Name] = tm
	}
	limiter := limits.New(limits.Options{
		RequestsPerSecond: cfg.Limits.PerPrincipal.RequestsPerSecond,
		Burst:             int(cfg.Limits.PerPrincipal.Burst),
		RunsPerPrincipal:  int(cfg.Limits.PerPrincipal.ConcurrentRuns),
		Runs:              int(cfg.Limits.ConcurrentRuns),
	})
	svc := tasks.NewService(tasks.Options{Store: store, Agents: specs, Teams: teamSpecs, Logger: log, ExclusiveStore: exclusive,
		Tracer: inst.tracing.Tracer(), Admission: limiter, Lease: cfg.Store.Lease.Std(), Instance: instanceID()})
	opts := aguihttp.Options{
		Runner: aguihttp.RunnerFunc(func(ctx context.Context, agent string, in *agui.RunAgentInput) (aguihttp.Stream, error) {
			return svc.StartRun(ctx, agent, in)
		}),
		Catalog:             &catalog{agents: remotes, teams: teams, store: store, log: log},
		Threads:             threads{svc},
		Logger:              log,
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
		Allowed:             allowLists(cfg),
		MaxMessages:         int(cfg.Limits.MaxMessages),
		MaxStateBytes:       int(cfg.Limits.MaxStateBytes),
	}
	if inst.authn != nil {
		opts.Auth = inst.authn // never a typed nil inside the interface
	}
	if cfg.Limits.PerPrincipal.RequestsPerSecond > 0 {
		opts.Admit = limiter.Allow
	}
	if m := inst.metrics; m != nil {
		opts.Metrics = m.Handler()
		opts.SSEStreams = m.Streams(observe.TransportSSE)
		opts.WebSockets = m.Streams(observe.TransportWebSocket)
	}
	h := aguihttp.New(opts)
	return &bridge{svc: svc, handler: h, public: withCallerAuthorization(h, inst.authn), remotes: remotes}
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

// threads adapts the run service's thread views to the HTTP handler.
type threads struct{ svc *tasks.Service }

func (t threads) Thread(ctx context.Context, agent, threadID string) (any, error) {
	return t.svc.Thread(ctx, agent, threadID)
}

func (t threads) Cancel(ctx context.Context, agent, threadID string) (any, error) {
	return t.svc.Cancel(ctx, agent, threadID)
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

// serve runs the bridge until ctx ends, then shuts down gracefully: no new
// connections or runs, in-flight runs get the grace period to finish, the
// rest are cut — their streams end with RUN_ERROR{code:"server_shutdown"},
// their A2A tasks keep running, and the next start takes them over and
// finishes them into the journal — WebSockets close with 1001, then the
// store closes.
func serve(ctx context.Context, cfg *config.Config, log *slog.Logger, listening func(net.Addr)) error {
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
	store := tasks.ObserveStore(raw, cmp.Or(cfg.Store.Kind, config.StoreEmbedded), metrics)
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

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	if addr := os.Getenv("BRIDGE_PPROF"); addr != "" {
		stop, err := servePprof(addr, log)
		if err != nil {
			return err
		}
		defer stop()
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
		s, err := redisstore.OpenRedisStore(ctx, c.URL, redisstore.RedisOptions{})
		if err != nil {
			return nil, fmt.Errorf("store: %w (is Redis running, and is store.url right?)", err)
		}
		return s, nil
	default:
		return nil, fmt.Errorf("store.kind %q is not supported by this build; use embedded, memory or redis", c.Kind)
	}
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
