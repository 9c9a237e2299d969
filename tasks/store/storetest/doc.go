// Package storetest is the conformance suite every store.Store backend
// passes, in the style of testing/fstest: a backend's own test calls Run
// with a function that opens an empty store, and Run checks the behaviour
// the bridge relies on — optimistic thread versions, deep copies,
// gap-free journal numbering under concurrency, and Wait as a tail.
//
// The suite synchronises with channels only, never with sleeps or fake
// clocks, so it works for backends that do real I/O (a file, a Redis
// server). Backends that notify in process may add a testing/synctest
// check of their own that Wait really blocks.
package storetest
