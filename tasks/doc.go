// Package tasks runs the bridged task lifecycle: it maps each AG-UI thread
// to an agent, the A2A contextId learned from that agent and the current
// task; it sends only the user messages the agent has not seen; it allows
// one active run per thread; and it drives each run — streaming, or a
// blocking send followed by GetTask polling — through the mapping
// translator into the thread's append-only event journal.
//
// Concurrency contract: Service.StartRun may be called concurrently. Every
// run is driven by one goroutine owned by the Service, on a context tied to
// the Service rather than to the HTTP request, so a client disconnect never
// cancels the A2A task; Service.Close waits for those goroutines. Clients
// read a run back from the journal (Run.Events), so a slow client cannot
// slow the agent or grow memory.
//
// The Store interface is shaped for durable and shared backends: thread
// records carry versions for optimistic concurrency, and journals are
// append-only with gap-free sequence numbers that can be tailed. Three
// backends implement it: MemoryStore (tests), BoltStore (one file, one
// process) and RedisStore, which many bridge processes share: its Wait
// wakes for entries any of them appends. Their doc comments give the
// storage layout.
package tasks
