package server

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui/aguihttp"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/errcode"
	"github.com/a2a-agui-bridge/bridge/mapping"
	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks"
)

// remoteAgent is one configured agent and the registry's record of it:
// its client, kept current with its card (a2a.Resolver: cards are checked
// again when stale, honouring Cache-Control and ETag), and its health.
type remoteAgent struct {
	cfg     config.Agent
	opts    a2a.Options
	res     *a2a.Resolver
	metrics *observe.Metrics // nil: none
	// setupErr is why the agent cannot be used whatever its card says (its
	// trusted keys do not load); connect returns it.
	setupErr error

	mu sync.Mutex
	// unreachable is the error code of the last call that got no answer
	// from the agent ("" once one is answered); lastProbe is when health
	// last fetched the card to see whether it is back.
	unreachable string
	lastProbe   time.Time
}

const retryAfter = 2 * time.Second

func newRemoteAgent(c config.Agent, inst instruments) *remoteAgent {
	r := &remoteAgent{cfg: c, metrics: inst.metrics, opts: a2a.Options{
		Name:       c.Name,
		URL:        c.URL,
		CardURL:    c.Card,
		Headers:    c.Headers,
		Transports: c.Transports,
		Tracer:     inst.tracing.Tracer(),
		Propagator: inst.tracing.Propagator(),
		Credentials: a2a.Credentials{
			Bearer: c.Auth.Bearer, APIKey: c.Auth.APIKey, ForwardCallerToken: c.Auth.ForwardCallerToken,
		},
		AllowHosts:   c.Trust.AllowHosts,
		MaxCardBytes: c.Trust.MaxCardBytes,
	}}
	if o := c.Auth.OAuth2; o.Set() {
		r.opts.Credentials.OAuth2 = &a2a.OAuth2{TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes}
	}
	if len(c.Trust.TrustedKeys) > 0 {
		ks, err := a2a.LoadKeySet(c.Trust.TrustedKeys)
		if err != nil {
			r.setupErr = &a2a.Error{Agent: c.Name, Op: "dial", Err: &a2a.TrustError{Reason: "trust.trustedKeys: " + err.Error()}}
		}
		r.opts.TrustedKeys = ks
	}
	if c.ADKReliability != config.A2UIOff {
		r.opts.ActivateExtensions = []string{a2a.ADKReliabilityExtension}
	}
	r.opts.Observer = r
	r.res = a2a.NewResolver(r.opts)
	return r
}

// CallDone implements a2a.Observer: it counts failures in the metrics and
// keeps what the last call says of the agent's reachability.
func (r *remoteAgent) CallDone(agent, op, code string) {
	if r.metrics != nil {
		r.metrics.CallDone(agent, op, code)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case errcode.Unreachable(code):
		r.unreachable = code
	case errcode.SaysNothingOfAgent(code):
		// Our caller left, or we are out of file descriptors.
	default:
		r.unreachable = "" // the agent answered, even if with an error
	}
}

// health says whether the agent can be reached: its card resolved and its
// last call got an answer. An agent whose last call failed is probed (its
// card fetched, at most every retryAfter) so it is seen coming back even
// when no run calls it.
func (r *remoteAgent) health(ctx context.Context) (*a2a.Agent, aguihttp.Health) {
	ag, h, _ := r.diagnose(ctx)
	return ag, h
}

// diagnose is health plus, for an agent that cannot be used, the URL tried
// and the cause (a2a.Explain) for the operator's log: what health shows
// clients names no host.
func (r *remoteAgent) diagnose(ctx context.Context) (*a2a.Agent, aguihttp.Health, string) {
	ag, err := r.connect(ctx)
	if err != nil {
		return nil, aguihttp.Health{Status: aguihttp.HealthUnavailable, Error: a2a.Classify(err).Message}, a2a.Explain(err)
	}
	r.mu.Lock()
	probe := r.unreachable != "" && time.Since(r.lastProbe) >= retryAfter
	if probe {
		r.lastProbe = time.Now()
	}
	r.mu.Unlock()
	var cause string
	if probe {
		dctx, cancel := context.WithTimeout(ctx, time.Duration(r.cfg.Timeouts.Request))
		if p, err := a2a.Dial(dctx, r.opts); err == nil { // CallDone records the outcome
			_ = p.Close()
		} else {
			cause = a2a.Explain(err)
		}
		cancel()
	}
	b := ag.Binding()
	card := r.res.Health()
	h := aguihttp.Health{Status: aguihttp.HealthOK, Binding: fmt.Sprintf("%s %s", b.Transport, b.ProtocolVersion),
		LastCardFetch: card.LastFetch, LastCardChange: card.LastChange, CardFreshUntil: card.FreshUntil}
	r.mu.Lock()
	if r.unreachable != "" {
		h.Status, h.Error = aguihttp.HealthUnavailable, "the last call failed: "+r.unreachable
	} else {
		cause = ""
	}
	r.mu.Unlock()
	return ag, h, cause
}

// logStart fetches the agent's card once, as the bridge starts, and logs
// whether the agent can be used: an unusable one is named with the URL
// tried and the cause before any run or probe finds out. It dials on its
// own, outside the resolver, so an agent started just after the bridge is
// not refused for RetryAfter by this early failure.
func (r *remoteAgent) logStart(ctx context.Context, log *slog.Logger) {
	if r.setupErr != nil {
		return // Serve stops on it
	}
	o := r.opts
	o.Observer = nil // not a call of a run: neither health nor metrics
	dctx, cancel := context.WithTimeout(ctx, time.Duration(r.cfg.Timeouts.Request))
	defer cancel()
	ag, err := a2a.Dial(dctx, o)
	switch {
	case err == nil:
		b := ag.Binding()
		_ = ag.Close()
		log.Info("agent ready", "agent", r.cfg.Name, "binding", b.Transport+" "+b.ProtocolVersion)
	case ctx.Err() == nil:
		info := a2a.Classify(err)
		log.Warn("agent unusable", "agent", r.cfg.Name, "code", info.Code, "message", info.Message, "cause", a2a.Explain(err))
	}
}

// connect returns the agent's client, resolving or re-checking its card
// when needed.
func (r *remoteAgent) connect(ctx context.Context) (*a2a.Agent, error) {
	if r.setupErr != nil {
		return nil, r.setupErr
	}
	dctx, cancel := context.WithTimeout(ctx, time.Duration(r.cfg.Timeouts.Request))
	defer cancel()
	return r.res.Agent(dctx)
}

func (r *remoteAgent) close() { r.res.Close() }

// info describes the agent for GET /agents, from its card when resolved.
func (r *remoteAgent) info(ctx context.Context) aguihttp.AgentInfo {
	info := aguihttp.AgentInfo{Name: r.cfg.Name, Description: r.cfg.Description, Skills: []aguihttp.Skill{},
		Capabilities: map[string]any{}}
	ag, health := r.health(ctx)
	info.Health = health
	if ag == nil {
		return info
	}
	card := ag.Card()
	if info.Description == "" {
		info.Description = card.Description
	}
	for _, s := range card.Skills {
		info.Skills = append(info.Skills, aguihttp.Skill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags})
	}
	b := ag.Binding()
	// AG-UI capabilities (AGUI-PROTOCOL.md §7.7) derived from the card.
	info.Capabilities = map[string]any{
		"identity":  map[string]any{"name": card.Name, "type": "a2a", "description": card.Description, "version": card.Version},
		"transport": map[string]any{"streaming": true, "websocket": true, "resumable": true},
		"humanInTheLoop": map[string]any{
			"supported": true, "interrupts": true, "approvals": true, "approveWithEdits": true,
		},
		"state":     map[string]any{"snapshots": true, "deltas": true, "persistentState": true},
		"reasoning": map[string]any{"supported": true, "streaming": true},
		// Frontend tools and the client's state reach the agent only
		// through the bridge's A2A extension.
		"tools": map[string]any{"supported": true, "clientProvided": ag.DeclaresExtension(mapping.ExtensionURI)},
		// Generative UI: the A2UI versions the card lists (newest first),
		// which runs activate per the agent's a2ui switch (tasks/a2ui.go).
		"a2ui": a2uiCapabilities(r.cfg.A2UI, ag.DeclaresExtension),
		"a2a": map[string]any{
			"streaming":          ag.Streaming(),
			"protocolVersion":    b.ProtocolVersion,
			"binding":            b.Transport,
			"defaultInputModes":  card.DefaultInputModes,
			"defaultOutputModes": card.DefaultOutputModes,
		},
	}
	return info
}

// a2uiCapabilities describes an agent's A2UI support for GET /agents/{name}.
func a2uiCapabilities(mode string, declares func(string) bool) map[string]any {
	versions := []string{}
	for _, v := range mapping.A2UIVersions {
		if declares(v.ExtensionURI()) {
			versions = append(versions, string(v))
		}
	}
	if mode == "" {
		mode = config.A2UIAuto
	}
	supported := mode == config.A2UIOn || (mode == config.A2UIAuto && len(versions) > 0)
	return map[string]any{"supported": supported, "versions": versions, "mode": mode, "activityType": mapping.A2UIActivityType}
}

// team is one configured team in the catalog.
type team struct {
	cfg     config.Team
	members []*remoteAgent
}

// info describes the team: its members' skills, and the members
// themselves as multiAgent.subagents (AGUI-PROTOCOL.md §7.7).
func (t *team) info(ctx context.Context) aguihttp.AgentInfo {
	info := aguihttp.AgentInfo{Name: t.cfg.Name, Description: t.cfg.Description, Skills: []aguihttp.Skill{},
		Team: &aguihttp.TeamInfo{Strategy: t.cfg.Strategy}}
	members := make([]aguihttp.AgentInfo, len(t.members))
	var wg sync.WaitGroup
	for i, m := range t.members {
		wg.Go(func() { members[i] = m.info(ctx) })
	}
	wg.Wait()
	var subagents []any
	up := 0
	for _, m := range members {
		info.Team.Members = append(info.Team.Members, aguihttp.TeamMember{Name: m.Name, Description: m.Description, Health: m.Health})
		subagents = append(subagents, map[string]any{"name": m.Name, "description": m.Description})
		info.Skills = append(info.Skills, m.Skills...)
		if m.Health.Status == aguihttp.HealthOK {
			up++
		}
	}
	info.Health = aguihttp.Health{Status: aguihttp.HealthOK}
	if up == 0 {
		info.Health = aguihttp.Health{Status: aguihttp.HealthUnavailable, Error: "no member is reachable"}
	} else if up < len(members) {
		info.Health = aguihttp.Health{Status: "degraded", Error: fmt.Sprintf("%d of %d members reachable", up, len(members))}
	}
	info.Capabilities = map[string]any{
		"identity":  map[string]any{"name": t.cfg.Name, "type": "a2a-team", "description": t.cfg.Description},
		"transport": map[string]any{"streaming": true, "websocket": true, "resumable": true},
		"multiAgent": map[string]any{
			"supported": true, "delegation": t.cfg.Strategy == config.StrategyRouter,
			"handoffs": t.cfg.Strategy == config.StrategySequential, "subagents": subagents,
		},
		"humanInTheLoop": map[string]any{"supported": true, "interrupts": true, "approvals": true, "approveWithEdits": true},
		"state":          map[string]any{"snapshots": true, "deltas": true, "persistentState": true},
		"reasoning":      map[string]any{"supported": true, "streaming": true},
	}
	return info
}

// catalog implements aguihttp.Catalog over the configured agents and teams.
type catalog struct {
	agents map[string]*remoteAgent
	teams  map[string]*team
	store  tasks.Store
	log    *slog.Logger
}

// names are the agents' names, sorted (teams are not agents of their own:
// their members are).
func (c *catalog) names() []string {
	names := make([]string, 0, len(c.agents))
	for n := range c.agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c *catalog) Has(name string) bool { return c.agents[name] != nil || c.teams[name] != nil }

func (c *catalog) Agents(ctx context.Context) []aguihttp.AgentInfo {
	names := c.names()
	for n := range c.teams {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]aguihttp.AgentInfo, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() { out[i], _ = c.Agent(ctx, n) })
	}
	wg.Wait()
	return out
}

func (c *catalog) Agent(ctx context.Context, name string) (aguihttp.AgentInfo, bool) {
	if t := c.teams[name]; t != nil {
		return t.info(ctx), true
	}
	r := c.agents[name]
	if r == nil {
		return aguihttp.AgentInfo{}, false
	}
	return r.info(ctx), true
}

// readyTimeout bounds GET /readyz: an agent that does not answer its card
// within it counts as unreachable.
const readyTimeout = 3 * time.Second

// Ready reports the store's and every agent's health; the handler decides
// (aguihttp.Readiness.Ready: the store, and at least one agent).
func (c *catalog) Ready(ctx context.Context) aguihttp.Readiness {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var rd aguihttp.Readiness
	names := c.names()
	rd.Agents = make([]aguihttp.AgentHealth, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() {
			_, h, cause := c.agents[n].diagnose(ctx)
			rd.Agents[i] = aguihttp.AgentHealth{Name: n, Health: h, Cause: cause}
		})
	}
	rd.Store = aguihttp.Health{Status: aguihttp.HealthOK}
	if err := c.store.Ping(ctx); err != nil {
		// The store's error may name hosts or files: logged, not shown.
		rd.Store = aguihttp.Health{Status: aguihttp.HealthUnavailable, Error: "the store does not answer"}
		c.log.Warn("store not ready", "err", err)
	}
	wg.Wait()
	return rd
}
