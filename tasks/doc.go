// Package tasks runs the bridged task lifecycle: it maps each AG-UI thread
// to an agent, the A2A contextId learned from that agent and the current
// task; it sends only the user messages the agent has not seen; it allows
// one active run per thread; and it drives each run — streaming, or a
// blocking send followed by GetTask polling — through the mapping
// translator into the thread's append-only event journal. A team run
// (TeamSpec) drives several agents at once, or routes to one, or chains
// them, through one mapping.Team (team.go, route.go).
//
// Concurrency contract: Service.StartRun may be called concurrently. Every
// run is driven by one goroutine owned by the Service, on a context tied to
// the Service rather than to the HTTP request, so a client disconnect never
// cancels the A2A task; Service.Close waits for those goroutines. Clients
// read a run back from the journal (Run.Events): a run driven in this
// process from its live log of stored events, others from the store, so a
// slow client cannot slow the agent or grow memory.
//
// The Store interface is shaped for durable and shared backends: thread
// records carry versions for optimistic concurrency, and journals are
// append-only, numbered by the run's driver (the thread's only writer
// while its run is active), and can be tailed. Three
// backends implement it: MemoryStore (tests), BoltStore (one file, one
// process) and RedisStore, which many bridge processes share: its Wait
// wakes for entries any of them appends. Their doc comments give the
// storage layout.
//
// Observability stays outside: a run reports to its agent's RunObserver
// (start, first answer, every AG-UI event, end with its outcome) and is a
// span of Options.Tracer whose context its A2A calls are made in;
// ObservedStore wraps any Store to time its operations and count pending
// interrupts. All are optional, and none imports a metrics library.
package tasks
