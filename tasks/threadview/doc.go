// Package threadview holds what the HTTP routes show of a thread: its
// snapshot (GET /agents/{name}/threads/{threadId}, and the answer to a
// cancel) and a page of a caller's threads (GET /agents/{name}/threads,
// GET /threads), built from the stored records of package store. It is
// the read side's JSON, kept apart from the engine (package tasks) that
// writes those records.
package threadview
