package store

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// Store errors.
var (
	// ErrNotFound means no thread is stored under the key.
	ErrNotFound = errors.New("tasks: thread not found")
	// ErrConflict means the thread changed since it was read (optimistic
	// concurrency): reload and decide again.
	ErrConflict = errors.New("tasks: thread version conflict")
)

// ThreadKey names a thread. Threads belong to one agent and one principal:
// the same AG-UI threadId under two agents, or used by two principals, is
// two threads, and nothing about one tells anything about the other.
type ThreadKey struct {
	Agent string
	// Principal is who the thread belongs to: the authenticated caller,
	// "" without auth.
	Principal string
	ThreadID  string
}

// String names the thread in errors and logs as agent/threadId. It leaves
// the principal out: logs and errors name agents and threads, never who
// called.
func (k ThreadKey) String() string { return k.Agent + "/" + k.ThreadID }

// Thread is the bridge's record of one AG-UI thread. Its JSON form (the
// tags) is what durable stores keep: the names are the storage format,
// independent of Go field names. The key is not in it: every store files
// a thread under its key.
type Thread struct {
	Key ThreadKey `json:"-"`
	// SeenMessageIDs are the AG-UI user message ids already sent to the
	// agent, so a run sends only what the agent has not seen.
	SeenMessageIDs []string `json:"seenMessageIds,omitempty"`

	// Active is the run in progress, nil when none: one active run per
	// thread. Releasing the thread is setting it to nil, so no field of a
	// finished run can linger. Its fields are stored flat beside the
	// thread's (see MarshalJSON): the storage format predates the type.
	Active *ActiveRun `json:"-"`
	// LastRunID is the run before the active one (the last run when none
	// is active): a client that reuses it (CopilotKit's resume) gets a run
	// whose ids differ from that run's.
	LastRunID string `json:"lastRunId,omitempty"`
	// JournalFrom is where the journal starts after compaction: entries
	// up to it were finished runs' and are gone (0: nothing compacted).
	// JournalBytes is the size of the events after it, as runs ending
	// added theirs (an estimate, made exact by each compaction).
	JournalFrom  int64 `json:"journalFrom,omitempty"`
	JournalBytes int64 `json:"journalBytes,omitempty"`
	// Principal is who created the thread (the authenticated caller; ""
	// without auth): the record's copy of Key.Principal, which stores
	// written before threads were keyed by principal read when they
	// migrate their keys. Records written before auth existed have none
	// and belong to unauthenticated callers.
	Principal string `json:"principal,omitempty"`

	// Messages is the conversation after the last run (the client's
	// messages with their ids, then the bridge's), and State the shared
	// state: the thread snapshot route serves them.
	Messages []agui.Message  `json:"messages,omitempty"`
	State    json.RawMessage `json:"state,omitempty"`
	// Interrupts are pending: the next run must resume every one.
	Interrupts []mapping.PendingInterrupt `json:"interrupts,omitempty"`
	// Resolved remembers answered interrupts, so an identical replay of a
	// resume is answered from the journal instead of reaching the agent.
	Resolved []ResolvedInterrupt `json:"resolved,omitempty"`
	// ToolCalls are the server tool calls shown on this thread, so a later
	// run reports their results on the original tool call ids.
	ToolCalls []mapping.ToolCallRef `json:"toolCalls,omitempty"`
	// FrontendCalls are calls to the client's own tools the last run left
	// pending: the next run's tool messages answer them on the same task.
	FrontendCalls []mapping.ToolCallRef `json:"frontendCalls,omitempty"`
	// StateVersion counts the shared-state changes sent on this thread.
	StateVersion int64 `json:"stateVersion,omitempty"`

	// Members are what the thread's agents learned, by agent: each its own
	// A2A context and current task. A single agent's thread has one member,
	// the agent itself; a team's has one per member it ran. Routed is the
	// member a router team sent the thread to last.
	Members map[string]*MemberRecord `json:"members,omitempty"`
	Routed  string                   `json:"routed,omitempty"`
	// Version is the optimistic-concurrency version: 0 for a thread not
	// yet stored, then incremented by every successful Put.
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
	// CreatedAt is when the thread was first stored (zero for records
	// written before it was kept: lists show their last activity).
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// ActiveRun is what a thread records of its run in progress: enough for
// this instance to renew its claim and for another to take the run over.
type ActiveRun struct {
	// RunID is the run in progress.
	RunID string `json:"activeRunId"`
	// Since is when it started.
	Since time.Time `json:"activeSince,omitzero"`
	// Owner is the bridge instance running it. An embedded store has one
	// writer, so a run owned by an earlier process is dead.
	Owner string `json:"owner,omitempty"`
	// LeaseExpires is when Owner's claim lapses unless renewed (shared
	// stores only; zero otherwise). Past it, the owner is taken for dead
	// and another instance may adopt the run.
	LeaseExpires time.Time `json:"leaseExpires,omitzero"`
	// After is the journal's last sequence number when the run started:
	// its events follow it.
	After int64 `json:"activeAfter,omitempty"`
	// Input is the run's request (RunAgentInput JSON) and Results the
	// tool-call answers its message carries, so a bridge that takes the
	// run over (after a restart) translates it as the run began.
	Input   json.RawMessage          `json:"activeInput,omitempty"`
	Results []mapping.SentToolResult `json:"activeResults,omitempty"`
	// Tasks are the A2A tasks the run's members follow, by member, once
	// known: set when the run starts for a task it continues, else as soon
	// as the member's agent names it. A cancel request reaches them
	// through it.
	Tasks map[string]string `json:"activeTasks,omitempty"`
	// CancelRequested says a cancel of the run was asked for: a second
	// request sends nothing more, and a run whose task was not known yet
	// cancels it the moment the agent names it.
	CancelRequested bool `json:"cancelRequested,omitempty"`
	// Resolved are the interrupts the run is answering.
	Resolved []ResolvedInterrupt `json:"activeResolved,omitempty"`
}

// Running reports whether runID is the thread's active run.
func (t *Thread) Running(runID string) bool { return t.Active != nil && t.Active.RunID == runID }

// threadFields is Thread without its methods, so MarshalJSON can encode
// it without recursing.
type threadFields Thread

// threadJSON is a thread's stored form: the thread's fields with the
// active run's beside them at the top level. encoding/json promotes the
// fields of an embedded struct pointer and allocates it on decode only
// when one of them is present, so a record without an active run decodes
// to Active == nil, and records written before ActiveRun existed read the
// same.
type threadJSON struct {
	*threadFields
	*ActiveRun
	legacyTask
}

// legacyTask is what records written before every run was a run of
// members held of a single agent's task: at the top level, beside the
// thread's fields. Decoding files it under the member "" (the record does
// not name its agent); Upgrade, once the key is known, under the agent.
type legacyTask struct {
	ContextID     string   `json:"contextId,omitempty"`
	TaskID        string   `json:"taskId,omitempty"`
	TaskState     string   `json:"taskState,omitempty"`
	TaskArtifacts []string `json:"taskArtifacts,omitempty"`
	// ActiveTaskID was the running run's task.
	ActiveTaskID string `json:"activeTaskId,omitempty"`
}

// MarshalJSON writes the thread in its storage format.
func (t Thread) MarshalJSON() ([]byte, error) {
	return json.Marshal(threadJSON{threadFields: (*threadFields)(&t), ActiveRun: t.Active})
}

// UnmarshalJSON reads the storage format.
func (t *Thread) UnmarshalJSON(b []byte) error {
	var v threadJSON
	v.threadFields = (*threadFields)(t)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	t.Active = v.ActiveRun
	if l := v.legacyTask; l.ContextID != "" || l.TaskID != "" || l.TaskState != "" {
		if t.Members == nil {
			t.Members = map[string]*MemberRecord{}
		}
		t.Members[""] = &MemberRecord{ContextID: l.ContextID, TaskID: l.TaskID, TaskState: l.TaskState, TaskArtifacts: l.TaskArtifacts}
	}
	if id := v.legacyTask.ActiveTaskID; id != "" && t.Active != nil && t.Active.Tasks == nil {
		t.Active.Tasks = map[string]string{"": id}
	}
	return nil
}

// Upgrade moves what a record written by an earlier version of the bridge
// kept of a single agent's task at the top level into Members, under the
// thread's agent (Key.Agent), where every record now keeps it. Stores call
// it on each record they read, once Key is set; the next write stores the
// new shape.
func (t *Thread) Upgrade() {
	if m, ok := t.Members[""]; ok {
		delete(t.Members, "")
		if t.Members[t.Key.Agent] == nil {
			t.Members[t.Key.Agent] = m
		}
	}
	if t.Active != nil {
		if id, ok := t.Active.Tasks[""]; ok {
			t.Active.Tasks = map[string]string{t.Key.Agent: id}
		}
	}
}

// MemberRecord is what one of a thread's agents learned: its A2A context
// (learned from the agent's first reply, never invented), its current task
// and that task's state, and the task's artifacts runs showed, so a run
// that continues the task does not show them again when a Task snapshot
// repeats them.
type MemberRecord struct {
	ContextID     string   `json:"contextId,omitempty"`
	TaskID        string   `json:"taskId,omitempty"`
	TaskState     string   `json:"taskState,omitempty"`
	TaskArtifacts []string `json:"taskArtifacts,omitempty"`
}

// ResolvedInterrupt is an interrupt a resume run answered.
type ResolvedInterrupt struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// PayloadHash identifies the payload (SHA-256 of its canonical JSON).
	PayloadHash string `json:"payloadHash"`
	// RunID and AfterSeq locate the resume run's events in the journal.
	RunID    string    `json:"runId"`
	AfterSeq int64     `json:"afterSeq"`
	At       time.Time `json:"at"`
}

// Clone returns a deep copy of the slices, so a caller never aliases
// stored data. Elements are values the bridge never mutates in place.
func (t *Thread) Clone() *Thread {
	c := *t
	c.SeenMessageIDs = append([]string(nil), t.SeenMessageIDs...)
	c.Messages = append([]agui.Message(nil), t.Messages...)
	c.State = append(json.RawMessage(nil), t.State...)
	c.Interrupts = append([]mapping.PendingInterrupt(nil), t.Interrupts...)
	c.Resolved = append([]ResolvedInterrupt(nil), t.Resolved...)
	if t.Active != nil {
		a := *t.Active
		a.Input = append(json.RawMessage(nil), a.Input...)
		a.Results = append([]mapping.SentToolResult(nil), a.Results...)
		a.Resolved = append([]ResolvedInterrupt(nil), a.Resolved...)
		a.Tasks = maps.Clone(a.Tasks)
		c.Active = &a
	}
	c.ToolCalls = append([]mapping.ToolCallRef(nil), t.ToolCalls...)
	c.FrontendCalls = append([]mapping.ToolCallRef(nil), t.FrontendCalls...)
	if t.Members != nil {
		c.Members = make(map[string]*MemberRecord, len(t.Members))
		for k, m := range t.Members {
			mc := *m
			mc.TaskArtifacts = append([]string(nil), m.TaskArtifacts...)
			c.Members[k] = &mc
		}
	}
	return &c
}

// Entry is one journal record: an encoded AG-UI event of a run.
type Entry struct {
	// Seq numbers a thread's entries, strictly increasing from 1. The
	// writer (the run's driver) assigns it; the bridge numbers without
	// gaps, but a store accepts them.
	Seq   int64
	RunID string
	// Event is the event's JSON, exactly as written to clients.
	Event []byte
	// Terminal marks the run's RUN_FINISHED or RUN_ERROR.
	Terminal bool
}

// LeaseLister is what a store may offer for the adoption scan: the threads
// with an active run whose lease lapsed at now, without reading every
// active thread. Stores without it are scanned through ActiveThreads.
type LeaseLister interface {
	LapsedLeases(ctx context.Context, now time.Time) ([]ThreadKey, error)
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
	// PutThreadAndAppend does PutThread and Append as one atomic write:
	// both or neither (either check failing is ErrConflict). A run ends
	// with it (the thread released and the terminal event journaled
	// together), so a crash cannot leave one without the other.
	PutThreadAndAppend(ctx context.Context, th *Thread, entries ...Entry) (int64, error)
	// ActiveThreads lists the threads whose record has an active run.
	ActiveThreads(ctx context.Context) ([]ThreadKey, error)
	// DeleteThread removes the thread if its version is still version
	// (else ErrConflict); its journal stays.
	DeleteThread(ctx context.Context, key ThreadKey, version int64) error
	// Append adds entries to the thread's journal under the sequence
	// numbers they carry, which must increase strictly, from above the
	// journal's last one; otherwise it is ErrConflict and nothing is
	// written. Only a thread's active run appends, so its driver knows
	// the numbers before the store does.
	Append(ctx context.Context, key ThreadKey, entries ...Entry) error
	// TrimJournal removes the journal's entries with Seq <= upTo, except
	// the last entry, which always stays (the numbering goes on from it):
	// the compaction of a long-lived thread's finished runs.
	TrimJournal(ctx context.Context, key ThreadKey, upTo int64) error
	// Read returns up to limit entries with Seq > after, oldest first.
	Read(ctx context.Context, key ThreadKey, after int64, limit int) ([]Entry, error)
	// LastSeq is the sequence number of the journal's last entry (0 when
	// empty).
	LastSeq(ctx context.Context, key ThreadKey) (int64, error)
	// Wait blocks until the journal has an entry with Seq > after, or ctx
	// ends (then it returns ctx's error).
	Wait(ctx context.Context, key ThreadKey, after int64) error
	// IndexInterrupt records which thread raised an interrupt, under the
	// thread's principal, and InterruptThread looks it up among the
	// interrupts of principal's threads (ErrNotFound when none of them
	// raised it), so a resume on the wrong thread is told apart from an
	// unknown id without telling anything of another principal's threads.
	// The same id raised on threads of two principals is two entries.
	IndexInterrupt(ctx context.Context, interruptID string, key ThreadKey) error
	InterruptThread(ctx context.Context, principal, interruptID string) (ThreadKey, error)
	// Ping reports whether the store is usable (readiness).
	Ping(ctx context.Context) error
	Close() error
	// ThreadLife lists, counts, purges and expires threads.
	ThreadLife
}

// Own is the record of an agent's own thread: its one member, the agent
// (Key.Agent); the zero record while the agent has named nothing.
func (t *Thread) Own() MemberRecord {
	if m := t.Members[t.Key.Agent]; m != nil {
		return *m
	}
	return MemberRecord{}
}
