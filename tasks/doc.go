// Package tasks runs the bridged task lifecycle: it maps each AG-UI thread
// to an agent, the A2A contextId learned from that agent and the current
// task; it sends only the user messages the agent has not seen; it allows
// one active run per thread; and it drives each run — streaming, or a
// blocking send followed by GetTask polling — through the mapping
// translator into the thread's append-only event journal. Threads are the
// caller's own: a thread is keyed by agent, principal (auth.PrincipalFrom,
// "" without auth) and AG-UI threadId, so every route that names a thread
// finds the caller's, and another principal's thread of the same id is
// indistinguishable from an id nobody used.
//
// Every run is a run of members: a single agent's run has one, the agent;
// a team's (TeamSpec) one per member it reaches — every member at once,
// the one a router picks, or a pipeline one after the other. The member
// is the unit: one code path joins it, talks to its agent, takes its
// events through the limits and its translator, records what it learned
// and cancels it. What differs is only the shape clients read (output.go:
// the agent's own translation, or its members' nested in a mapping.Team).
//
// Where to look:
//
//   - service.go: Service, its catalog of agents and teams, and the
//     release of a run; start.go: StartRun in its steps (admit, load,
//     plan, claim, spawn) and the planning helpers;
//   - driver.go: the run's shell, one goroutine per run (lifecycle), with
//     its plan (runPlan, decided before it starts), its phase (phase.go),
//     the handshake with StartRun (accept, reject, awaitAnswer), its
//     journal, lease and timeouts; ending.go: how a run ends (emit,
//     finalize, suspend, the cancel grace);
//   - crew.go: the run's members and their scheduling (strategies, the
//     lane older clients read members in, what the record keeps);
//     member.go: one member's part (join, its conversation with its agent,
//     sign-in answers, limits, the task it names); output.go: the two
//     shapes of a run's stream; route.go: a router's choice;
//   - upstream.go: every call to an agent — the one conversation every kind
//     of member has with it (its message, the answer to a sign-in, a run
//     taken over, a cancel), GetTask and CancelTask, cancelOrGet, the
//     timeout failure;
//   - record.go: the one optimistic-retry loop for thread records;
//     resume.go: interrupts and resumes; takeover.go, lease.go: runs
//     continued after a restart or adopted from a dead instance;
//     signin.go: the agent streams kept open, after a run ended waiting for
//     a sign-in, for the resume run;
//   - legacy.go: a JWT caller's threads moved from their old principal;
//   - reader.go: what clients read (journal.Reader) — one run, or a thread
//     followed (Follow), or long-polled (Poll);
//   - threads.go: the thread snapshot (package threadview shows it) and
//     cancel; threadlife.go: a thread's delete and the per-principal cap;
//     errors.go: typed errors (codes from package errcode's table, through
//     agui); budget.go: an agent event through the run's limits (package
//     limits has them, with admission across runs); observe.go: the
//     observer hooks; compact.go: bounded thread journals
//     (journal.Compact); a2ui.go: the A2UI extension of a run.
//
// Concurrency contract: Service.StartRun may be called concurrently. Every
// run is driven by one goroutine owned by the Service, on a context tied to
// the Service rather than to the HTTP request, so a client disconnect never
// cancels the A2A task; Service.Close waits for those goroutines. The
// agent's stream is read on the run's goroutine, which translates each
// event and queues it for the journal (no hand-off per event): a member
// that runs alone (an agent's own run, a router's pick, a pipeline's stage)
// talks to its agent on it; a parallel team's members each have a
// goroutine, which only reads and forwards. Clients
// read a run back from the journal (journal.Reader): a run driven in this
// process from its live log of stored events, others from the store, so a
// slow client cannot slow the agent or grow memory.
//
// The Store contract and its backends are package store and its
// subpackages (memory, embedded bbolt, Redis, and the conformance suite
// storetest), so this package links no database client; tasks names the
// contract's types through aliases (contract.go). A thread's run in
// progress is one value, Thread.Active (nil when idle). Thread records carry
// versions for optimistic concurrency, and journals are append-only,
// numbered by the run's driver (the thread's only writer while its run is
// active), and can be tailed.
//
// Observability stays outside: a run reports to its agent's RunObserver
// (start, first answer, every AG-UI event, end with its outcome) and is a
// span of Options.Tracer whose context its A2A calls are made in;
// store.ObservedStore wraps any Store to time its operations and count pending
// interrupts. All are optional, and none imports a metrics library.
package tasks
