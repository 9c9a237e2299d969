package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui/aguihttp"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/mapping"
	"github.com/a2a-agui-bridge/bridge/tasks"
)

// remoteAgent holds one configured agent's client, dialed lazily: an agent
// that is down at start-up does not stop the bridge, and the next run
// retries its card (at most every retryAfter).
type remoteAgent struct {
	cfg  config.Agent
	opts a2a.Options

	mu       sync.Mutex
	agent    *a2a.Agent
	lastErr  error
	lastTry  time.Time
	dialLock sync.Mutex
}

const retryAfter = 2 * time.Second

func newRemoteAgent(c config.Agent) *remoteAgent {
	return &remoteAgent{cfg: c, opts: a2a.Options{
		Name:       c.Name,
		URL:        c.URL,
		CardURL:    c.Card,
		Headers:    c.Headers,
		Transports: c.Transports,
	}}
}

// connect returns the agent's client, resolving its card when needed.
func (r *remoteAgent) connect(ctx context.Context) (*a2a.Agent, error) {
	r.mu.Lock()
	if r.agent != nil {
		defer r.mu.Unlock()
		return r.agent, nil
	}
	if r.lastErr != nil && time.Since(r.lastTry) < retryAfter {
		defer r.mu.Unlock()
		return nil, r.lastErr
	}
	r.mu.Unlock()

	// One dial at a time per agent; later callers reuse its result.
	r.dialLock.Lock()
	defer r.dialLock.Unlock()
	r.mu.Lock()
	if r.agent != nil {
		defer r.mu.Unlock()
		return r.agent, nil
	}
	r.mu.Unlock()

	dctx, cancel := context.WithTimeout(ctx, time.Duration(r.cfg.Timeouts.Request))
	defer cancel()
	ag, err := a2a.Dial(dctx, r.opts)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastTry = time.Now()
	r.lastErr = err
	if err == nil {
		r.agent = ag
	}
	return ag, err
}

func (r *remoteAgent) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agent != nil {
		_ = r.agent.Close()
	}
}

// info describes the agent for GET /agents, from its card when resolved.
func (r *remoteAgent) info(ctx context.Context) aguihttp.AgentInfo {
	info := aguihttp.AgentInfo{Name: r.cfg.Name, Description: r.cfg.Description, Skills: []aguihttp.Skill{},
		Capabilities: map[string]any{}}
	ag, err := r.connect(ctx)
	if err != nil {
		info.Health = aguihttp.Health{Status: "unavailable", Error: a2a.Classify(err).Message}
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
	info.Health = aguihttp.Health{Status: "ok", Binding: fmt.Sprintf("%s %s", b.Transport, b.ProtocolVersion)}
	// AG-UI capabilities (AGUI-PROTOCOL.md §7.7) derived from the card.
	info.Capabilities = map[string]any{
		"identity":  map[string]any{"name": card.Name, "type": "a2a", "description": card.Description, "version": card.Version},
		"transport": map[string]any{"streaming": true, "websocket": false},
		"humanInTheLoop": map[string]any{
			"supported": true, "interrupts": true, "approvals": true, "approveWithEdits": true,
		},
		"state":     map[string]any{"snapshots": true, "deltas": true, "persistentState": true},
		"reasoning": map[string]any{"supported": true, "streaming": true},
		// Frontend tools and the client's state reach the agent only
		// through the bridge's A2A extension.
		"tools": map[string]any{"supported": true, "clientProvided": ag.DeclaresExtension(mapping.ExtensionURI)},
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

// catalog implements aguihttp.Catalog over the configured agents.
type catalog struct {
	agents map[string]*remoteAgent
	store  tasks.Store
}

func (c *catalog) names() []string {
	names := make([]string, 0, len(c.agents))
	for n := range c.agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c *catalog) Has(name string) bool { return c.agents[name] != nil }

func (c *catalog) Agents(ctx context.Context) []aguihttp.AgentInfo {
	names := c.names()
	out := make([]aguihttp.AgentInfo, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c.agents[n].info(ctx)
		}()
	}
	wg.Wait()
	return out
}

func (c *catalog) Agent(ctx context.Context, name string) (aguihttp.AgentInfo, bool) {
	r := c.agents[name]
	if r == nil {
		return aguihttp.AgentInfo{}, false
	}
	return r.info(ctx), true
}

// Ready needs the store; agents may come and go, and each run reports an
// unreachable agent itself (GET /agents shows their health).
func (c *catalog) Ready(ctx context.Context) error {
	return c.store.Ping(ctx)
}
