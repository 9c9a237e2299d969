package tasks

import (
	"context"
	"errors"
	"time"
)

// Store errors.
var (
	// ErrNotFound means no thread is stored under the key.
	ErrNotFound = errors.New("tasks: thread not found")
	// ErrConflict means the thread changed since it was read (optimistic
	// concurrency): reload and decide again.
	ErrConflict = errors.New("tasks: thread version conflict")
)

// ThreadKey names a thread. Threads belong to one agent: the same AG-UI
// threadId under two agents is two threads.
type ThreadKey struct {
	Agent    string
	ThreadID string
}

func (k ThreadKey) String() string { return k.Agent + "/" + k.ThreadID }

// Thread is the bridge's record of one AG-UI thread.
type Thread struct {
	Key ThreadKey
	// ContextID is the A2A context, learned from the agent's first reply
	// and never invented.
	ContextID string
	// TaskID and TaskState are the thread's current A2A task.
	TaskID    string
	TaskState string
	// SeenMessageIDs are the AG-UI user message ids already sent to the
	// agent, so a run sends only what the agent has not seen.
	SeenMessageIDs []string
	// ActiveRunID is the run in progress ("" when none): one active run
	// per thread.
	ActiveRunID string
	// ActiveSince is when the active run started.
	ActiveSince time.Time
	// Version is the optimistic-concurrency version: 0 for a thread not
	// yet stored, then incremented by every successful Put.
	Version   int64
	UpdatedAt time.Time
}

// Clone returns a deep copy, so a caller never aliases stored slices.
func (t *Thread) Clone() *Thread {
	c := *t
	c.SeenMessageIDs = append([]string(nil), t.SeenMessageIDs...)
	return &c
}

// Entry is one journal record: an encoded AG-UI event of a run.
type Entry struct {
	// Seq numbers a thread's entries from 1 with no gaps.
	Seq   int64
	RunID string
	// Event is the event's JSON, exactly as written to clients.
	Event []byte
	// Terminal marks the run's RUN_FINISHED or RUN_ERROR.
	Terminal bool
}

// Store persists threads and their append-only event journals. Every
// backend passes the same conformance suite (storetest).
type Store interface {
	// GetThread returns a copy of the stored thread, or ErrNotFound.
	GetThread(ctx context.Context, key ThreadKey) (*Thread, error)
	// PutThread stores th if the stored version equals th.Version (0 means
	// "must not exist yet") and returns the new version; otherwise
	// ErrConflict and nothing is written.
	PutThread(ctx context.Context, th *Thread) (int64, error)
	// DeleteThread removes the thread if its version is still version
	// (else ErrConflict); its journal stays.
	DeleteThread(ctx context.Context, key ThreadKey, version int64) error
	// Append adds entries to the thread's journal, numbering them (their
	// Seq is ignored), and returns the sequence number of the last one.
	Append(ctx context.Context, key ThreadKey, entries ...Entry) (int64, error)
	// Read returns up to limit entries with Seq > after, oldest first.
	Read(ctx context.Context, key ThreadKey, after int64, limit int) ([]Entry, error)
	// LastSeq is the sequence number of the journal's last entry (0 when
	// empty).
	LastSeq(ctx context.Context, key ThreadKey) (int64, error)
	// Wait blocks until the journal has an entry with Seq > after, or ctx
	// ends (then it returns ctx's error).
	Wait(ctx context.Context, key ThreadKey, after int64) error
	// Ping reports whether the store is usable (readiness).
	Ping(ctx context.Context) error
	Close() error
}
