package observe

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// Transports of open client streams (the transport label of
// bridge_active_streams).
const (
	TransportSSE       = "sse"
	TransportWebSocket = "websocket"
)

// eventTypes are the AG-UI event types the bridge can emit; each agent's
// counter of a type is resolved the first time it is counted and kept, so
// counting an event never hashes label values. eventIndex must list them
// in this order.
var eventTypes = [...]agui.EventType{
	agui.EventRunStarted, agui.EventRunFinished, agui.EventRunError,
	agui.EventStepStarted, agui.EventStepFinished,
	agui.EventTextMessageStart, agui.EventTextMessageContent, agui.EventTextMessageEnd, agui.EventTextMessageChunk,
	agui.EventToolCallStart, agui.EventToolCallArgs, agui.EventToolCallEnd, agui.EventToolCallChunk, agui.EventToolCallResult,
	agui.EventStateSnapshot, agui.EventStateDelta, agui.EventMessagesSnapshot,
	agui.EventActivitySnapshot, agui.EventActivityDelta, agui.EventRaw, agui.EventCustom,
	agui.EventReasoningStart, agui.EventReasoningMessageStart, agui.EventReasoningMessageContent,
	agui.EventReasoningMessageEnd, agui.EventReasoningMessageChunk, agui.EventReasoningEnd,
	agui.EventReasoningEncryptedValue,
	agui.EventSubagentStarted, agui.EventSubagentFinished, agui.EventSubagentError,
}

// eventIndex is t's position in eventTypes, or -1. A switch on constant
// strings compiles to a few length and string comparisons: 8 ns per
// counted event against 28 ns for a map lookup (BenchmarkEvent), and on
// the streaming path no map memory to bring into the cache per event.
func eventIndex(t agui.EventType) int {
	switch t {
	case agui.EventRunStarted:
		return 0
	case agui.EventRunFinished:
		return 1
	case agui.EventRunError:
		return 2
	case agui.EventStepStarted:
		return 3
	case agui.EventStepFinished:
		return 4
	case agui.EventTextMessageStart:
		return 5
	case agui.EventTextMessageContent:
		return 6
	case agui.EventTextMessageEnd:
		return 7
	case agui.EventTextMessageChunk:
		return 8
	case agui.EventToolCallStart:
		return 9
	case agui.EventToolCallArgs:
		return 10
	case agui.EventToolCallEnd:
		return 11
	case agui.EventToolCallChunk:
		return 12
	case agui.EventToolCallResult:
		return 13
	case agui.EventStateSnapshot:
		return 14
	case agui.EventStateDelta:
		return 15
	case agui.EventMessagesSnapshot:
		return 16
	case agui.EventActivitySnapshot:
		return 17
	case agui.EventActivityDelta:
		return 18
	case agui.EventRaw:
		return 19
	case agui.EventCustom:
		return 20
	case agui.EventReasoningStart:
		return 21
	case agui.EventReasoningMessageStart:
		return 22
	case agui.EventReasoningMessageContent:
		return 23
	case agui.EventReasoningMessageEnd:
		return 24
	case agui.EventReasoningMessageChunk:
		return 25
	case agui.EventReasoningEnd:
		return 26
	case agui.EventReasoningEncryptedValue:
		return 27
	case agui.EventSubagentStarted:
		return 28
	case agui.EventSubagentFinished:
		return 29
	case agui.EventSubagentError:
		return 30
	}
	return -1
}

// Bucket bounds, in seconds. Runs last from a fraction of a second (an
// echo) to the 10-minute default run timeout; the first event comes after
// the agent's own latency (an LLM's first token: 0.2–5 s); store
// operations range from a map access to a bbolt fsync under load.
var (
	runBuckets        = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	firstEventBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	storeBuckets      = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
)

// Metrics holds the bridge's Prometheus metrics on a registry of its own
// (not the global one, so nothing a dependency registers leaks into
// /metrics, and tests can build as many as they like). It is safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	runs       *prometheus.CounterVec
	inProgress *prometheus.GaugeVec
	runTime    *prometheus.HistogramVec
	firstEvent *prometheus.HistogramVec
	events     *prometheus.CounterVec
	a2aErrors  *prometheus.CounterVec
	streams    *prometheus.GaugeVec
	pending    *prometheus.GaugeVec
	storeTime  *prometheus.HistogramVec
	storeErrs  *prometheus.CounterVec
	reloads    prometheus.Counter
	reloadErrs prometheus.Counter
	expired    prometheus.Counter

	mu       sync.RWMutex
	storeOps map[storeKey]storeOp
}

type storeKey struct{ backend, op string }

type storeOp struct {
	latency prometheus.Observer
	errors  prometheus.Counter
}

// NewMetrics registers the bridge's metrics, and the Go runtime and
// process collectors (go_goroutines, process_resident_memory_bytes, …), on
// a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bridge_runs_total",
			Help: "Runs ended, by agent and outcome (finished, interrupted, cancelled, error, suspended); code is the RUN_ERROR code when outcome is error.",
		}, []string{"agent", "outcome", "code"}),
		inProgress: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "bridge_runs_in_progress",
			Help: "Runs this process is driving now, by agent.",
		}, []string{"agent"}),
		runTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bridge_run_duration_seconds",
			Help:    "Time from the start of a run to its end, by agent and outcome.",
			Buckets: runBuckets,
		}, []string{"agent", "outcome"}),
		firstEvent: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bridge_run_first_event_seconds",
			Help:    "Time from the start of a run to the agent's first event (its first answer to the run's A2A call), by agent.",
			Buckets: firstEventBuckets,
		}, []string{"agent"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bridge_agui_events_total",
			Help: "AG-UI events the bridge produced (journaled and streamed), by agent and event type; text and state deltas as translated, before those that queued behind a busy store were merged.",
		}, []string{"agent", "type"}),
		a2aErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bridge_a2a_errors_total",
			Help: "Failed calls to A2A agents, by agent, A2A method (or card) and the bridge's stable error code.",
		}, []string{"agent", "method", "code"}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "bridge_active_streams",
			Help: "Open client connections: SSE streams (runs and thread event streams) and WebSocket connections.",
		}, []string{"transport"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "bridge_pending_interrupts",
			Help: "Interrupts waiting for a resume, by agent, as this process last saw their threads.",
		}, []string{"agent"}),
		storeTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bridge_store_operation_duration_seconds",
			Help:    "Latency of thread store operations, by backend and operation.",
			Buckets: storeBuckets,
		}, []string{"backend", "op"}),
		storeErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bridge_store_errors_total",
			Help: "Failed thread store operations (not counting not-found and version conflicts, which are answers), by backend and operation.",
		}, []string{"backend", "op"}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bridge_config_reloads_total",
			Help: "Config reloads applied (SIGHUP or serve --watch).",
		}),
		reloadErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bridge_config_reload_failures_total",
			Help: "Config reloads refused (an invalid file, or a change to listen or store): the config in force stayed.",
		}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bridge_threads_expired_total",
			Help: "Threads deleted by the retention sweep (store.retention.idleThreadTTL).",
		}),
		storeOps: make(map[storeKey]storeOp),
	}
	m.reg.MustRegister(m.runs, m.inProgress, m.runTime, m.firstEvent, m.events, m.a2aErrors,
		m.streams, m.pending, m.storeTime, m.storeErrs, m.reloads, m.reloadErrs, m.expired,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Both transports show from the first scrape, at 0.
	m.streams.WithLabelValues(TransportSSE)
	m.streams.WithLabelValues(TransportWebSocket)
	return m
}

// ConfigReloaded counts a config reload, applied (ok) or refused.
func (m *Metrics) ConfigReloaded(ok bool) {
	if ok {
		m.reloads.Inc()
	} else {
		m.reloadErrs.Inc()
	}
}

// ThreadsExpired counts threads the retention sweep deleted.
func (m *Metrics) ThreadsExpired(n int) { m.expired.Add(float64(n)) }

// Registry is the registry the metrics are on (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A failing collector (the process collector on an odd platform)
		// should not hide every other metric.
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// Streams is the gauge of open client connections of one transport
// (TransportSSE, TransportWebSocket).
func (m *Metrics) Streams(transport string) prometheus.Gauge {
	return m.streams.WithLabelValues(transport)
}

// AgentMetrics are one agent's run metrics, resolved once so that what a
// run calls per event is a switch, an atomic load and an atomic add.
// It implements tasks.RunObserver.
type AgentMetrics struct {
	m          *Metrics
	agent      string
	inProgress prometheus.Gauge
	firstEvent prometheus.Observer
	// events are resolved on first use rather than by Agent: a series per
	// agent and type the agent never produces (sub-agents, encrypted
	// reasoning, …) would only weigh on Prometheus.
	events [len(eventTypes)]atomic.Pointer[counterRef]
}

type counterRef struct{ prometheus.Counter }

// Agent returns the run metrics of the named agent.
func (m *Metrics) Agent(name string) *AgentMetrics {
	a := &AgentMetrics{
		m:          m,
		agent:      name,
		inProgress: m.inProgress.WithLabelValues(name),
		firstEvent: m.firstEvent.WithLabelValues(name),
	}
	// The agent's pending interrupts show at 0 until it has some.
	m.pending.WithLabelValues(name)
	return a
}

// RunStarted counts a run this process started driving.
func (a *AgentMetrics) RunStarted() { a.inProgress.Inc() }

// FirstEvent records how long the agent took to answer a run.
func (a *AgentMetrics) FirstEvent(wait time.Duration) { a.firstEvent.Observe(wait.Seconds()) }

// Event counts one AG-UI event of a run.
func (a *AgentMetrics) Event(t agui.EventType) {
	if i := eventIndex(t); i >= 0 {
		c := a.events[i].Load()
		if c == nil {
			// Concurrent first uses resolve the same child: either store wins.
			c = &counterRef{a.m.events.WithLabelValues(a.agent, string(t))}
			a.events[i].Store(c)
		}
		c.Inc()
		return
	}
	a.m.events.WithLabelValues(a.agent, string(t)).Inc() // a type added to agui after eventTypes
}

// RunEnded counts a run's end; code is the RUN_ERROR code for
// OutcomeError and "" otherwise. Runs end once, so resolving the labels
// here costs nothing per event.
func (a *AgentMetrics) RunEnded(outcome, code string, elapsed time.Duration) {
	a.inProgress.Dec()
	a.m.runs.WithLabelValues(a.agent, outcome, code).Inc()
	a.m.runTime.WithLabelValues(a.agent, outcome).Observe(elapsed.Seconds())
}

// CallDone counts a failed A2A call (code is a2a.Classify's code; "" is a
// success, which is not counted). It implements a2a.Observer.
func (m *Metrics) CallDone(agent, method, code string) {
	if code != "" {
		m.a2aErrors.WithLabelValues(agent, method, code).Inc()
	}
}

// StoreOp records one store operation. It implements tasks.StoreObserver.
func (m *Metrics) StoreOp(backend, op string, elapsed time.Duration, failed bool) {
	k := storeKey{backend, op}
	m.mu.RLock()
	o, ok := m.storeOps[k]
	m.mu.RUnlock()
	if !ok {
		o = storeOp{latency: m.storeTime.WithLabelValues(backend, op), errors: m.storeErrs.WithLabelValues(backend, op)}
		m.mu.Lock()
		m.storeOps[k] = o
		m.mu.Unlock()
	}
	o.latency.Observe(elapsed.Seconds())
	if failed {
		o.errors.Inc()
	}
}

// PendingInterrupts sets the agent's number of pending interrupts. It
// implements tasks.StoreObserver.
func (m *Metrics) PendingInterrupts(agent string, n int) {
	m.pending.WithLabelValues(agent).Set(float64(n))
}
