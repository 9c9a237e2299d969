package tasks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// Agent is what a run needs from a remote A2A agent; *a2a.Agent satisfies
// it, and tests may pass their own.
type Agent interface {
	Streaming() bool
	// DeclaresExtension reports whether the agent's card lists the A2A
	// extension uri.
	DeclaresExtension(uri string) bool
	SendStreaming(ctx context.Context, msg *a2a.Message) iter.Seq2[a2a.Event, error]
	Send(ctx context.Context, msg *a2a.Message, returnImmediately bool) (a2a.Event, error)
	GetTask(ctx context.Context, id a2a.TaskID) (*a2a.Task, error)
	CancelTask(ctx context.Context, id a2a.TaskID) (*a2a.Task, error)
	// Subscribe reattaches to a running task; its first event is a Task
	// snapshot.
	Subscribe(ctx context.Context, id a2a.TaskID) iter.Seq2[a2a.Event, error]
}

// AgentSpec is one configured agent and its run policy.
type AgentSpec struct {
	Name string
	// Connect returns a ready client; it is called for every run, so it
	// should cache, and retry card resolution when the agent was down.
	Connect func(ctx context.Context) (Agent, error)
	// RunTimeout bounds a whole run; IdleTimeout bounds the time without
	// progress from the agent. Either firing cancels the A2A task and ends
	// the run with RUN_ERROR{code:"a2a_timeout"}. Zero disables.
	RunTimeout  time.Duration
	IdleTimeout time.Duration
	// RequestTimeout bounds one unary call (GetTask, CancelTask).
	RequestTimeout time.Duration
	// PollInitial and PollMax bound the GetTask backoff used for agents
	// without streaming and to recover a stream that ended early.
	PollInitial time.Duration
	PollMax     time.Duration
	StatusText  mapping.StatusTextPolicy
	// StateKey is the shared-state key the bridge owns; default "a2a".
	StateKey string
	// MaxInlineBytes bounds one inline file both ways; default 1 MiB.
	MaxInlineBytes int
	// InterruptTTL, when positive, makes this agent's interrupts expire;
	// the bridge refuses a resolve after that (a cancel is still taken).
	InterruptTTL time.Duration
	// Observer is told what this agent's runs do (metrics); nil: nothing.
	Observer RunObserver
	// MaxEventBytes bounds one A2A event's parts (RUN_ERROR
	// event_too_large above it); MaxStateBytes bounds the shared state the
	// agent's data builds (RUN_ERROR state_too_large). Zero: no bound.
	MaxEventBytes int
	MaxStateBytes int
	// MaxRunBytes is a run's output budget: what its agents send and what
	// it journals each count against it (limits.RunBudget); past it the run ends
	// with RUN_ERROR run_too_large and the task is cancelled. Zero: none.
	MaxRunBytes int64
	// MaxThreadJournalBytes caps a thread's journal: a run ending with
	// more drops the oldest finished runs' events (compact.go). Zero: none.
	MaxThreadJournalBytes int64
	// RedactKeys are object keys (case-insensitive) whose values become
	// "[REDACTED]" in the shared state built from agent data.
	RedactKeys []string
	// A2UI says when runs activate the A2UI extension (tasks/a2ui.go);
	// "" is mapping.A2UIAuto. A2UICatalogs are the catalogs announced as
	// the client's when it names none (default: the version's standard
	// catalog). MaxA2UIActionBytes bounds forwardedProps.a2uiAction
	// (default mapping.DefaultMaxA2UIActionBytes).
	A2UI               mapping.A2UIMode
	A2UICatalogs       []string
	MaxA2UIActionBytes int
}

// Options configure a Service.
type Options struct {
	Store  Store
	Agents []AgentSpec
	// Teams put several of the Agents behind one name (see TeamSpec).
	Teams  []TeamSpec
	Logger *slog.Logger
	// FirstEventWait is how long StartRun waits for the agent's first
	// event, so that an unreachable agent is an HTTP error rather than a
	// stream holding RUN_ERROR. Default 10s.
	FirstEventWait time.Duration
	// ExclusiveStore says this process is the store's only writer (memory
	// and embedded stores): an active run recorded by another process is
	// then known dead, e.g. after a crash, and does not block its thread.
	ExclusiveStore bool
	// CancelGrace is how long a run whose task the agent reported
	// cancelled (CancelTask's answer) waits for the agent's own stream to
	// say so before ending cancelled by itself. Default 2s.
	CancelGrace time.Duration
	// StoreOutage is how long a run waits for a failing store to take its
	// events before it ends with RUN_ERROR store_unavailable; meanwhile
	// its clients are shown nothing new and its agent is read no further
	// ahead than journal.MaxPending events. Default: Lease/2 where leases are in
	// force — well inside the lease, so a run that rides an outage out
	// still owns its thread when the store is back and renews at once —
	// else 10s.
	StoreOutage time.Duration
	// Lease, when positive and the store is shared (not ExclusiveStore),
	// makes every run hold a lease on its thread that its driver renews
	// every Lease/3. The Service scans for runs whose lease lapsed (their
	// instance died) every Lease/2 or so, and adopts them: it reattaches
	// to the run's A2A task and finishes the run's journal. Zero: no
	// leases, a run of a dead instance stays active.
	Lease time.Duration
	// Instance names this process in thread records (Owner) and logs;
	// default a random UUID. Two live processes must not share one.
	Instance string
	// Tracer, when set, gives every run a span (a child of the request's
	// trace when it carried one); the run's A2A calls are made in it. Nil:
	// no spans.
	Tracer trace.Tracer
	// Admission, when set, is asked before a run starts (after the request
	// was checked against its thread): a refusal is returned as is from
	// StartRun; an admitted run holds its slot until it ends.
	Admission Admission
}

// Admission caps the runs in progress; *limits.Limiter satisfies it.
type Admission interface {
	AcquireRun(principal string) (release func(), err error)
}

// Service runs AG-UI runs against A2A agents; its concurrency contract is
// the package's (doc.go).
type Service struct {
	store Store
	// catalog is the agents and teams new runs may use; SetAgents swaps
	// it. A run keeps the spec it started with.
	catalog atomic.Pointer[agentCatalog]
	log     *slog.Logger

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closing bool

	// signIns read the streams of tasks waiting for a credential.
	signIns map[ThreadKey]*signInWatch
	// drivers are the runs this process is driving, by thread.
	drivers map[ThreadKey]*driver

	// opt is the Options with their defaults; its Lease is zero unless
	// leases are in force (a shared store).
	opt Options
	// stopScan ends the adoption scan; scanDone is closed once it stopped.
	stopScan chan struct{}
	scanDone chan struct{}
	// lapsed holds, per thread, when and at which record version its
	// lease was first seen lapsed (see lapsedLongEnough).
	lapsedMu sync.Mutex
	lapsed   map[ThreadKey]lapsedSighting
	// maxThreads caps each principal's threads (threadlife.go; 0: none).
	maxThreads atomic.Int64
}

// NewService returns a Service; call Close to stop it.
func NewService(opt Options) *Service {
	ctx, cancel := context.WithCancelCause(context.Background())
	if opt.ExclusiveStore {
		opt.Lease = 0
	}
	opt.Instance = cmp.Or(opt.Instance, uuid.NewString())
	opt.Logger = cmp.Or(opt.Logger, slog.New(slog.DiscardHandler))
	opt.Tracer = cmp.Or(opt.Tracer, noTracer)
	opt.CancelGrace = positiveOr(opt.CancelGrace, 2*time.Second)
	opt.FirstEventWait = positiveOr(opt.FirstEventWait, 10*time.Second)
	if opt.StoreOutage <= 0 && opt.Lease > 0 {
		opt.StoreOutage = opt.Lease / 2
	}
	opt.StoreOutage = positiveOr(opt.StoreOutage, 10*time.Second)
	s := &Service{
		store: opt.Store, log: opt.Logger, ctx: ctx, cancel: cancel, opt: opt,
		signIns:  make(map[ThreadKey]*signInWatch),
		drivers:  make(map[ThreadKey]*driver),
		lapsed:   make(map[ThreadKey]lapsedSighting),
		stopScan: make(chan struct{}),
		scanDone: make(chan struct{}),
	}
	s.SetAgents(opt.Agents, opt.Teams)
	if opt.Lease > 0 {
		go s.scanLeases()
	} else {
		close(s.scanDone)
	}
	return s
}

// positiveOr is d, or def when d is not positive.
func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// agentCatalog is one generation of the Service's agents and teams.
type agentCatalog struct {
	agents map[string]*AgentSpec
	teams  map[string]*TeamSpec
}

// SetAgents replaces the agents and teams that new runs, thread views,
// cancels and adoptions use (a config reload). Runs in progress keep the
// spec they started with. A team member that is not among agents is left
// out, and logged.
func (s *Service) SetAgents(agents []AgentSpec, teams []TeamSpec) {
	c := &agentCatalog{agents: make(map[string]*AgentSpec, len(agents)), teams: make(map[string]*TeamSpec, len(teams))}
	for i := range agents {
		spec := agents[i]
		if spec.RequestTimeout <= 0 {
			spec.RequestTimeout = 30 * time.Second
		}
		if spec.PollInitial <= 0 {
			spec.PollInitial = 250 * time.Millisecond
		}
		if spec.PollMax < spec.PollInitial {
			spec.PollMax = max(5*time.Second, spec.PollInitial)
		}
		c.agents[spec.Name] = &spec
	}
	for i := range teams {
		team := teams[i]
		team.Members = slices.DeleteFunc(slices.Clone(team.Members), func(m string) bool {
			if c.agents[m] == nil {
				s.log.Error("team member is not a configured agent; left out", "team", team.Name, "member", m)
				return true
			}
			return false
		})
		if team.StateKey == "" {
			team.StateKey = mapping.StateKey
		}
		if len(team.Members) > 0 && c.agents[team.Name] == nil {
			c.teams[team.Name] = &team
		}
	}
	s.catalog.Store(c)
}

// agentSpec is the current spec of agent name, or nil.
func (s *Service) agentSpec(name string) *AgentSpec { return s.catalog.Load().agents[name] }

// errShutdown is the cause set on run contexts when the bridge stops.
var errShutdown = errors.New("bridge shutting down")

// Close stops accepting runs, waits for the running ones until ctx ends,
// then cuts the rest short (each ends with RUN_ERROR{code:"bridge_shutdown"};
// their A2A tasks keep running and the thread remembers them).
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		close(s.stopScan)
	}
	s.closing = true
	s.mu.Unlock()
	<-s.scanDone // no adoption starts after this
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.cancel(errShutdown)
		return nil
	case <-ctx.Done():
		s.cancel(errShutdown)
		<-done
		return ctx.Err()
	}
}

// Instance is the name of this process in thread records (Thread.Owner).
func (s *Service) Instance() string { return s.opt.Instance }

// HasAgent reports whether name is a configured agent or team.
func (s *Service) HasAgent(name string) bool {
	st := start{name: name, cat: s.catalog.Load()}
	return st.cast()
}

// stale reports whether th's active run belongs to a bridge process that
// no longer exists: with an exclusive store (memory, embedded) only this
// process writes, so a run it does not own died with an earlier process.
func (s *Service) stale(th *Thread) bool {
	return s.opt.ExclusiveStore && th.Active != nil && th.Active.Owner != s.opt.Instance
}

// running reports whether th has an active run that is alive: not one an
// earlier process of an exclusive store left behind.
func (s *Service) running(th *Thread) bool { return th.Active != nil && !s.stale(th) }

// release ends the thread's active run, journaling entries (the run's
// terminal event) in the same write. update, when non-nil, records what the
// run learned. A brand-new thread whose run never reached the agent is
// deleted again, so a rejected request leaves nothing behind. It reports
// whether the entries were journaled.
func (s *Service) release(th *Thread, update func(*Thread), entries ...Entry) bool {
	released, _ := s.releaseErr(th, update, entries...)
	return released
}

// releaseErr is release that also returns the store's failure (nil when
// the thread was released, or was not this run's to release any more).
func (s *Service) releaseErr(th *Thread, update func(*Thread), entries ...Entry) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*time.Second)
	defer cancel()
	released := false
	err := s.retryThread(ctx, th.Key, nil, func(cur *Thread) error {
		if !cur.Running(th.Active.RunID) || cur.Active.Owner != th.Active.Owner {
			// Another instance adopted the run (this one's lease lapsed):
			// the run is its to end.
			return nil
		}
		if update == nil && cur.Version == 1 && len(entries) == 0 {
			err := s.store.DeleteThread(ctx, th.Key, cur.Version)
			released = !errors.Is(err, ErrConflict)
			return err
		}
		clearActive(cur)
		if update != nil {
			update(cur)
		}
		_, err := s.store.PutThreadAndAppend(ctx, cur, entries...)
		released = err == nil
		return err
	})
	if err != nil && !released && !errors.Is(err, ErrConflict) {
		s.log.Error("release thread", "thread_id", th.Key.ThreadID, "agent", th.Key.Agent, "err", err)
		return false, err
	}
	return released, nil
}

// register records d as the run this process drives on its thread, until
// the driver's goroutine ends (unregister).
func (s *Service) register(d *driver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drivers[d.thread.Key] = d
}

func (s *Service) unregister(d *driver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drivers[d.thread.Key] == d {
		delete(s.drivers, d.thread.Key)
	}
}

// driving returns the run this process drives on key, if it is runID.
func (s *Service) driving(key ThreadKey, runID string) *driver {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.drivers[key]; d != nil && d.in.RunID == runID {
		return d
	}
	return nil
}

// StoreError is the *Error of a store that failed: 503 store_unavailable.
func StoreError(err error) error {
	return &Error{Code: agui.CodeStoreUnavailable, Message: "the bridge's store is unavailable", Err: err}
}

// agentError turns a failure to reach the agent before the stream into an
// HTTP error with the A2A error's stable code.
func agentError(name string, err error) error {
	info := a2a.Classify(err)
	return &Error{status: info.HTTPStatus, Code: info.Code,
		Message: fmt.Sprintf("agent %q: %s", name, info.Message), Err: errors.Join(ErrAgentDown, err)}
}

// appendSeen adds ids to the seen list, without duplicates.
func appendSeen(seen, ids []string) []string {
	set := make(map[string]bool, len(seen))
	for _, id := range seen {
		set[id] = true
	}
	for _, id := range ids {
		if !set[id] {
			set[id] = true
			seen = append(seen, id)
		}
	}
	return seen
}
