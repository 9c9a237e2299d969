// Package store is the contract between the run engine (package tasks)
// and where threads and journals are kept: the Store interface, the thread
// record (Thread, its JSON tags being the storage format) and the journal
// entry, plus MemoryStore, the backend for tests and single-process
// trials. A thread is keyed by agent, principal and thread id (ThreadKey):
// backends file everything of a thread — record, journal, interrupt index
// — under all three, and migrate what older versions filed without the
// principal. The durable backends live in their own packages, so the engine
// links no database client: boltstore (one file, one process) and
// redisstore (shared by many processes). Every backend passes the same
// conformance suite, storetest. GroupWriter is what the durable backends
// share to write the appends of every run waiting at once in one group (a
// bbolt transaction, a Redis pipeline).
//
// Concurrency contract: a Store is safe for concurrent use. Thread records
// carry versions for optimistic concurrency (PutThread fails with
// ErrConflict when the record changed since it was read), and journals are
// append-only, numbered by their only writer, the thread's active run.
//
// ObservedStore wraps any Store to time its operations for metrics and to
// count the pending interrupts of the threads it reads and writes. A
// thread's life outside its runs — lists per principal, counts, purges,
// the idle ones a retention sweep deletes — is part of the contract
// (threads.go); MoveThread moves one between keys.
package store
