// Package journal is how a run's events reach its readers: a Writer
// appends them to the thread's journal in the store, batching what queues
// behind an append in flight (and merging queued deltas behind a slow
// store), and hands each stored batch to the run's Live log, which the
// readers in this process follow; a Reader reads a run, or a whole thread,
// from the Live log while it can and from the store otherwise, and Poll
// answers a long poll. A reader is shown an event only once the
// store took it, so a crash cannot take back what a client saw; a reader
// whose thread is deleted ends with ErrThreadDeleted. Compact bounds a
// long-lived thread's journal, dropping its oldest finished runs.
package journal
