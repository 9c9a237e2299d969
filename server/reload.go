package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui/aguihttp"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks"
)

// Live config reload (Options.Reload: SIGHUP, serve --watch). What a
// config says about agents, teams, auth, allow lists, limits and the HTTP
// handler is one generation: built whole from a valid file, then swapped
// in at once, so a request sees one config or the next, never a mix.
// Requests, streams and runs already in flight keep the generation (and
// the agent specs) they started with; a replaced generation's agents and
// authenticator are closed only at shutdown, as its streams may still use
// them. The run service, the store, the listener, metrics and tracing are
// not part of a generation: they live as long as the process.

// generation is one config's agents, teams, auth and HTTP handler.
type generation struct {
	cfg       *config.Config
	inst      instruments // authn is this generation's
	remotes   map[string]*remoteAgent
	teams     map[string]*team
	specs     []tasks.AgentSpec
	teamSpecs []tasks.TeamSpec
	handler   *aguihttp.Handler
	public    http.Handler
}

// newGeneration builds cfg's agents and teams; an agent whose config is
// the same as in prev keeps prev's client (its card cache and health).
func newGeneration(cfg *config.Config, prev *generation, inst instruments) *generation {
	g := &generation{cfg: cfg, inst: inst, remotes: make(map[string]*remoteAgent, len(cfg.Agents)), teams: make(map[string]*team, len(cfg.Teams))}
	for _, a := range cfg.Agents {
		var r *remoteAgent
		if prev != nil {
			if old := prev.remotes[a.Name]; old != nil && reflect.DeepEqual(old.cfg, a) {
				r = old
			}
		}
		if r == nil {
			r = newRemoteAgent(a, inst)
		}
		g.remotes[a.Name] = r
		var runs tasks.RunObserver // stays a nil interface without metrics
		if inst.metrics != nil {
			runs = inst.metrics.Agent(a.Name)
		}
		g.specs = append(g.specs, tasks.AgentSpec{
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
			// The run's output budget and its thread's journal cap.
			MaxRunBytes:           cfg.Limits.MaxRunBytes,
			MaxThreadJournalBytes: cfg.Limits.MaxThreadJournalBytes,
			RedactKeys:            cfg.RedactKeys,
			// A2UI (tasks/a2ui.go): when runs activate it, the catalogs
			// announced for clients that name none, the action bound.
			A2UI:               a2uiMode(a.A2UI),
			A2UICatalogs:       a.A2UICatalogs,
			MaxA2UIActionBytes: int(cfg.Limits.MaxA2UIActionBytes),
		})
	}
	for _, t := range cfg.Teams {
		spec := tasks.TeamSpec{Name: t.Name, Description: t.Description, Strategy: teamStrategy(t.Strategy), Members: t.Members}
		if inst.metrics != nil {
			spec.Observer = inst.metrics.Agent(t.Name)
		}
		g.teamSpecs = append(g.teamSpecs, spec)
		tm := &team{cfg: t}
		for _, m := range t.Members {
			tm.members = append(tm.members, g.remotes[m])
		}
		g.teams[t.Name] = tm
	}
	return g
}

// live serves every request with the current generation's handler.
type live struct {
	current atomic.Pointer[generation]

	mu  sync.Mutex
	all []*generation // every generation installed, for shutdown
}

func (l *live) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.current.Load().public.ServeHTTP(w, r)
}

// install makes g the generation new requests use.
func (l *live) install(g *generation) {
	l.mu.Lock()
	l.all = append(l.all, g)
	l.mu.Unlock()
	l.current.Store(g)
}

// Shutdown closes the WebSockets of every generation (aguihttp.Handler.Shutdown).
func (l *live) Shutdown(ctx context.Context) {
	l.mu.Lock()
	all := append([]*generation(nil), l.all...)
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, g := range all {
		wg.Go(func() { g.handler.Shutdown(ctx) })
	}
	wg.Wait()
}

// close closes every generation's agents and authenticators, once each.
func (l *live) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	closed := map[any]bool{}
	if len(l.all) > 0 && l.all[0].inst.authn != nil {
		// The first generation's authenticator is Serve's to close (later
		// generations share it while the auth config is unchanged).
		closed[l.all[0].inst.authn] = true
	}
	for _, g := range l.all {
		for _, r := range g.remotes {
			if !closed[r] {
				closed[r] = true
				r.close()
			}
		}
		if a := g.inst.authn; a != nil && !closed[a] {
			closed[a] = true
			a.Close()
		}
	}
}

// Reload is what Serve needs to reload the config: the file, the listen
// address that overrides the file's, when to reload, and the logger's
// level, which a reload sets.
type Reload struct {
	Path   string // the config file Serve's config was loaded from
	Listen string // replaces the file's listen on every reload ("": none)
	// Watch reloads whenever the file's content changes, as well as on
	// each signal.
	Watch bool
	// LoadedSum is FileSum of the file read before the config in force
	// was loaded from it. The watch compares against it, so a change made
	// while the store opens or the listener starts is still seen (read
	// before, not after: a change in between costs one needless reload,
	// never a missed one). nil: the file as the watch first reads it.
	LoadedSum []byte
	Level     *slog.LevelVar // nil: the level stays
	// Signals asks for a reload with each value it delivers: SIGHUP in
	// bridge serve, which registers it before calling Serve, so that a
	// SIGHUP arriving while the store opens waits for the reload loop
	// instead of ending the process.
	Signals <-chan os.Signal
}

// errReloadRefused marks a valid config that cannot be applied live.
var errReloadRefused = errors.New("needs a restart")

// reload reads the config file again and applies it, or leaves the
// config in force as it was and says why.
func (b *bridge) reload(ctx context.Context, rl *Reload) error {
	cur := b.handler.current.Load()
	cfg, err := config.Load(rl.Path)
	if err != nil {
		return err // a *config.ValidationError names the path and line
	}
	if rl.Listen != "" {
		cfg.Listen = rl.Listen
	}
	if cfg.Listen != cur.cfg.Listen {
		return fmt.Errorf("listen changed from %s to %s: %w (the listener is not moved live)", cur.cfg.Listen, cfg.Listen, errReloadRefused)
	}
	if !reflect.DeepEqual(cfg.Store, cur.cfg.Store) {
		return fmt.Errorf("store changed: %w (threads, journals and interrupts stay on the store the bridge started with)", errReloadRefused)
	}
	if err := CheckExposure(cfg); err != nil {
		return fmt.Errorf("%v: the config in force stays", err)
	}
	inst := cur.inst
	if !reflect.DeepEqual(cfg.Auth, cur.cfg.Auth) {
		if inst.authn, err = newAuthenticator(ctx, cfg.Auth); err != nil {
			return fmt.Errorf("auth: %w", err)
		}
	}
	g := newGeneration(cfg, cur, inst)
	for name, r := range g.remotes {
		if r.setupErr != nil && cur.remotes[name] != r {
			// A key file that does not load: refuse the whole reload.
			for _, nr := range g.remotes {
				if cur.remotes[nr.cfg.Name] != nr {
					nr.close()
				}
			}
			if inst.authn != cur.inst.authn && inst.authn != nil {
				inst.authn.Close()
			}
			return r.setupErr
		}
	}
	b.wire(g)
	// The service first: a request the new handler lets through finds its
	// agent there. Runs in flight keep the specs they started with.
	b.svc.SetAgents(g.specs, g.teamSpecs)
	b.limiter.SetOptions(limiterOptions(cfg))
	if rl.Level != nil {
		_ = observe.SetLevel(rl.Level, cfg.Log.Level) // Validate checked it
	}
	b.handler.install(g)
	for _, what := range restartOnly(cur.cfg, cfg) {
		b.log.Warn("config reloaded, but this setting takes effect only at the next start", "setting", what)
	}
	b.log.Info("config reloaded", "path", rl.Path, "agents", len(cfg.Agents), "teams", len(cfg.Teams))
	return nil
}

// restartOnly names the settings that differ between old and new and
// that a running bridge cannot change: the log format and tracing (set up
// once), and the http.Server's own timeouts.
func restartOnly(old, new *config.Config) []string {
	var out []string
	if old.Log.Format != new.Log.Format {
		out = append(out, "log.format")
	}
	if !reflect.DeepEqual(old.Tracing, new.Tracing) {
		out = append(out, "tracing")
	}
	if old.Server.ReadHeaderTimeout != new.Server.ReadHeaderTimeout {
		out = append(out, "server.readHeaderTimeout")
	}
	if old.Server.IdleTimeout != new.Server.IdleTimeout {
		out = append(out, "server.idleTimeout")
	}
	if old.Server.ShutdownGrace != new.Server.ShutdownGrace {
		out = append(out, "server.shutdownGrace")
	}
	return out
}

// watchInterval is how often serve --watch reads the config file. It
// reads the file rather than subscribe to inotify: a Kubernetes ConfigMap
// is updated by swapping a symlink two levels up, and editors save by
// renaming a new file over the old, both of which leave a watch on the
// file itself watching nothing; reading a small file once a second costs
// nothing and sees every change.
const watchInterval = time.Second

// reloads applies the config again on each signal (SIGHUP), and with rl.Watch
// whenever the file's content changes, until ctx ends.
func (b *bridge) reloads(ctx context.Context, rl *Reload) {
	last := rl.LoadedSum
	if last == nil {
		last = FileSum(rl.Path)
	}
	var tick <-chan time.Time
	if rl.Watch {
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		why := "SIGHUP"
		select {
		case <-ctx.Done():
			return
		case <-rl.Signals:
		case <-tick:
			sum := FileSum(rl.Path)
			if bytes.Equal(sum, last) {
				continue
			}
			last, why = sum, "the file changed"
		}
		if rl.Watch {
			last = FileSum(rl.Path)
		}
		err := b.reload(ctx, rl)
		if m := b.inst.metrics; m != nil {
			m.ConfigReloaded(err == nil)
		}
		if err != nil {
			b.log.Error("config reload refused; the config in force stays", "path", rl.Path, "trigger", why, "err", err)
		}
	}
}

// FileSum is the SHA-256 of the file's content (nil when it cannot be read).
func FileSum(path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(data)
	return sum[:]
}
