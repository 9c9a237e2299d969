package tasks

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// BoltStore is the embedded backend: one bbolt file that survives
// restarts. Every write is one bbolt transaction, fsynced on commit, so a
// crash leaves either all of a PutThread or Append or none of it.
//
// The file holds three top-level buckets:
//
//	meta:    "format" → boltFormat
//	threads: agent + "\x00" + threadID → JSON boltThread
//	journal: agent + "\x00" + threadID → bucket of
//	         8-byte big-endian seq → JSON boltEntry
//
// Agent names never contain NUL (config allows [a-z0-9_-]), so the key is
// unambiguous whatever the thread id holds. Big-endian seqs sort in
// numeric order, so Read is a cursor seek and LastSeq the cursor's last key.
//
// bbolt locks the file for one process. Wait is woken in process, by this
// store's own Appends; tailing a journal that other processes write is the
// Redis backend's job.
type BoltStore struct {
	db   *bbolt.DB
	path string

	mu      sync.Mutex
	waiters map[ThreadKey]*boltWaiters // keys with a Wait in progress
	closed  bool
	done    chan struct{} // closed by Close, ends every Wait
}

// boltWaiters is the wake-up channel shared by the Waits on one key.
type boltWaiters struct {
	ch chan struct{} // closed by the key's next Append
	n  int           // Waits holding ch
}

var _ Store = (*BoltStore)(nil)

// boltLockTimeout bounds how long OpenBoltStore waits for another process
// to release the file: long enough for a restarting bridge to let go, short
// enough that a second bridge on the same file fails with a clear error.
const boltLockTimeout = time.Second

// boltFormat is the layout described on BoltStore; a file written in
// another layout is refused rather than misread.
const boltFormat = "1"

var (
	bucketMeta    = []byte("meta")
	bucketThreads = []byte("threads")
	bucketJournal = []byte("journal")
	// bucketInterrupts maps an interrupt id to its thread's key.
	bucketInterrupts = []byte("interrupts")
	keyFormat        = []byte("format")
)

// boltThread is a Thread as stored: its JSON names are the file format,
// independent of Go field names.
type boltThread struct {
	Agent          string                     `json:"agent"`
	ThreadID       string                     `json:"threadId"`
	ContextID      string                     `json:"contextId,omitempty"`
	TaskID         string                     `json:"taskId,omitempty"`
	TaskState      string                     `json:"taskState,omitempty"`
	SeenMessageIDs []string                   `json:"seenMessageIds,omitempty"`
	ActiveRunID    string                     `json:"activeRunId,omitempty"`
	ActiveSince    time.Time                  `json:"activeSince,omitzero"`
	Owner          string                     `json:"owner,omitempty"`
	ActiveTaskID   string                     `json:"activeTaskId,omitempty"`
	CancelReq      bool                       `json:"cancelRequested,omitempty"`
	Messages       []agui.Message             `json:"messages,omitempty"`
	State          json.RawMessage            `json:"state,omitempty"`
	Interrupts     []mapping.PendingInterrupt `json:"interrupts,omitempty"`
	Resolved       []ResolvedInterrupt        `json:"resolved,omitempty"`
	ActiveResolved []ResolvedInterrupt        `json:"activeResolved,omitempty"`
	ToolCalls      []mapping.ToolCallRef      `json:"toolCalls,omitempty"`
	FrontendCalls  []mapping.ToolCallRef      `json:"frontendCalls,omitempty"`
	StateVersion   int64                      `json:"stateVersion,omitempty"`
	Version        int64                      `json:"version"`
	UpdatedAt      time.Time                  `json:"updatedAt,omitzero"`
}

// boltEntry is an Entry as stored (its Seq is the key). Event is []byte,
// not json.RawMessage, so its bytes come back exactly: encoding/json would
// compact a RawMessage.
type boltEntry struct {
	RunID    string `json:"runId"`
	Terminal bool   `json:"terminal,omitempty"`
	Event    []byte `json:"event"`
}

// OpenBoltStore opens the store file at path, creating it (mode 0600) and
// its directory (mode 0700) if needed. It fails after about a second if
// another process has the file open.
func OpenBoltStore(path string) (*BoltStore, error) {
	if path == "" {
		return nil, errors.New("tasks: open bolt store: empty path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("tasks: open bolt store: %w", err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: boltLockTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("tasks: open bolt store %s: another process has it open (gave up after %s): %w",
			path, boltLockTimeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("tasks: open bolt store %s: %w", path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		switch f := meta.Get(keyFormat); {
		case f == nil:
			if err := meta.Put(keyFormat, []byte(boltFormat)); err != nil {
				return err
			}
		case string(f) != boltFormat:
			return fmt.Errorf("file format %q, this bridge reads %q", f, boltFormat)
		}
		for _, name := range [][]byte{bucketThreads, bucketJournal, bucketInterrupts} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("tasks: open bolt store %s: %w", path, err)
	}
	return &BoltStore{
		db:      db,
		path:    path,
		waiters: make(map[ThreadKey]*boltWaiters),
		done:    make(chan struct{}),
	}, nil
}

func boltKey(k ThreadKey) []byte {
	b := make([]byte, 0, len(k.Agent)+1+len(k.ThreadID))
	b = append(b, k.Agent...)
	b = append(b, 0)
	return append(b, k.ThreadID...)
}

func seqKey(seq int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(seq))
}

// lastSeqIn is the journal's last seq; j may be nil (no journal yet).
func lastSeqIn(j *bbolt.Bucket) (int64, error) {
	if j == nil {
		return 0, nil
	}
	k, _ := j.Cursor().Last()
	if k == nil {
		return 0, nil
	}
	if len(k) != 8 {
		return 0, fmt.Errorf("journal key %x is not an 8-byte seq", k)
	}
	return int64(binary.BigEndian.Uint64(k)), nil
}

// storedVersion is the version of the thread stored under k, 0 if none.
func storedVersion(threads *bbolt.Bucket, k []byte) (int64, error) {
	v := threads.Get(k)
	if v == nil {
		return 0, nil
	}
	var rec struct {
		Version int64 `json:"version"`
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		return 0, fmt.Errorf("decode thread: %w", err)
	}
	return rec.Version, nil
}

// GetThread implements Store.
func (s *BoltStore) GetThread(ctx context.Context, key ThreadKey) (*Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rec *boltThread
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketThreads).Get(boltKey(key))
		if v == nil {
			return nil
		}
		rec = new(boltThread)
		return json.Unmarshal(v, rec) // copies out of the mmap before the tx ends
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: get thread %s: %w", key, err)
	}
	if rec == nil {
		return nil, ErrNotFound
	}
	return &Thread{
		Key:             ThreadKey{Agent: rec.Agent, ThreadID: rec.ThreadID},
		ContextID:       rec.ContextID,
		TaskID:          rec.TaskID,
		TaskState:       rec.TaskState,
		SeenMessageIDs:  rec.SeenMessageIDs,
		ActiveRunID:     rec.ActiveRunID,
		ActiveSince:     rec.ActiveSince,
		Owner:           rec.Owner,
		ActiveTaskID:    rec.ActiveTaskID,
		CancelRequested: rec.CancelReq,
		Messages:        rec.Messages,
		State:           rec.State,
		Interrupts:      rec.Interrupts,
		Resolved:        rec.Resolved,
		ActiveResolved:  rec.ActiveResolved,
		ToolCalls:       rec.ToolCalls,
		FrontendCalls:   rec.FrontendCalls,
		StateVersion:    rec.StateVersion,
		Version:         rec.Version,
		UpdatedAt:       rec.UpdatedAt,
	}, nil
}

// PutThread implements Store.
func (s *BoltStore) PutThread(ctx context.Context, th *Thread) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// The new version is known before the transaction (it succeeds only
	// if the stored one is th.Version), so encode outside bbolt's single
	// writer lock.
	next := th.Version + 1
	v, err := json.Marshal(boltThread{
		Agent:          th.Key.Agent,
		ThreadID:       th.Key.ThreadID,
		ContextID:      th.ContextID,
		TaskID:         th.TaskID,
		TaskState:      th.TaskState,
		SeenMessageIDs: th.SeenMessageIDs,
		ActiveRunID:    th.ActiveRunID,
		ActiveSince:    th.ActiveSince,
		Owner:          th.Owner,
		ActiveTaskID:   th.ActiveTaskID,
		CancelReq:      th.CancelRequested,
		Messages:       th.Messages,
		State:          th.State,
		Interrupts:     th.Interrupts,
		Resolved:       th.Resolved,
		ActiveResolved: th.ActiveResolved,
		ToolCalls:      th.ToolCalls,
		FrontendCalls:  th.FrontendCalls,
		StateVersion:   th.StateVersion,
		Version:        next,
		UpdatedAt:      time.Now(),
	})
	if err != nil {
		return 0, fmt.Errorf("tasks: put thread %s: %w", th.Key, err)
	}
	k := boltKey(th.Key)
	err = s.db.Update(func(tx *bbolt.Tx) error {
		threads := tx.Bucket(bucketThreads)
		cur, err := storedVersion(threads, k)
		if err != nil {
			return err
		}
		if cur != th.Version {
			return ErrConflict
		}
		return threads.Put(k, v)
	})
	if errors.Is(err, ErrConflict) {
		return 0, ErrConflict
	}
	if err != nil {
		return 0, fmt.Errorf("tasks: put thread %s: %w", th.Key, err)
	}
	return next, nil
}

// DeleteThread implements Store.
func (s *BoltStore) DeleteThread(ctx context.Context, key ThreadKey, version int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := boltKey(key)
	err := s.db.Update(func(tx *bbolt.Tx) error {
		threads := tx.Bucket(bucketThreads)
		if threads.Get(k) == nil {
			return ErrNotFound
		}
		cur, err := storedVersion(threads, k)
		if err != nil {
			return err
		}
		if cur != version {
			return ErrConflict
		}
		return threads.Delete(k)
	})
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		return err
	}
	if err != nil {
		return fmt.Errorf("tasks: delete thread %s: %w", key, err)
	}
	return nil
}

// Append implements Store.
func (s *BoltStore) Append(ctx context.Context, key ThreadKey, entries ...Entry) (int64, error) {
	if len(entries) == 0 {
		return s.LastSeq(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	vals := make([][]byte, len(entries))
	for i, e := range entries {
		v, err := json.Marshal(boltEntry{RunID: e.RunID, Terminal: e.Terminal, Event: e.Event})
		if err != nil {
			return 0, fmt.Errorf("tasks: append to journal %s: %w", key, err)
		}
		vals[i] = v
	}
	var last int64
	err := s.db.Update(func(tx *bbolt.Tx) error {
		j, err := tx.Bucket(bucketJournal).CreateBucketIfNotExists(boltKey(key))
		if err != nil {
			return err
		}
		// Keys only ever grow, so fill pages completely instead of leaving
		// room for inserts that never come.
		j.FillPercent = 1
		seq, err := lastSeqIn(j)
		if err != nil {
			return err
		}
		for _, v := range vals {
			seq++
			if err := j.Put(seqKey(seq), v); err != nil {
				return err
			}
		}
		last = seq
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("tasks: append to journal %s: %w", key, err)
	}
	s.notify(key) // after the commit, so a woken Wait finds the entries
	return last, nil
}

// Read implements Store.
func (s *BoltStore) Read(ctx context.Context, key ThreadKey, after int64, limit int) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if after < 0 {
		after = 0
	}
	var out []Entry
	err := s.db.View(func(tx *bbolt.Tx) error {
		j := tx.Bucket(bucketJournal).Bucket(boltKey(key))
		if j == nil {
			return nil
		}
		c := j.Cursor()
		for k, v := c.Seek(seqKey(after + 1)); k != nil; k, v = c.Next() {
			if limit > 0 && len(out) == limit {
				break
			}
			if len(k) != 8 {
				return fmt.Errorf("journal key %x is not an 8-byte seq", k)
			}
			var rec boltEntry
			// Unmarshal copies: nothing returned points into the mmap.
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode entry %x: %w", k, err)
			}
			out = append(out, Entry{
				Seq:      int64(binary.BigEndian.Uint64(k)),
				RunID:    rec.RunID,
				Event:    rec.Event,
				Terminal: rec.Terminal,
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: read journal %s: %w", key, err)
	}
	return out, nil
}

// LastSeq implements Store.
func (s *BoltStore) LastSeq(ctx context.Context, key ThreadKey) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var last int64
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		last, err = lastSeqIn(tx.Bucket(bucketJournal).Bucket(boltKey(key)))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("tasks: last seq of journal %s: %w", key, err)
	}
	return last, nil
}

// Wait implements Store. Only Appends through this BoltStore wake it (see
// BoltStore). Close ends it with an error.
func (s *BoltStore) Wait(ctx context.Context, key ThreadKey, after int64) error {
	for {
		// Subscribe before looking, so an Append that commits after the
		// look closes the channel already held.
		ch, release, err := s.subscribe(key)
		if err != nil {
			return err
		}
		last, err := s.LastSeq(ctx, key)
		if err != nil || last > after {
			release()
			return err
		}
		select {
		case <-ch:
			// Woken by an Append; loop to check it reached past after.
			release()
		case <-s.done:
			release()
			return s.closedError()
		case <-ctx.Done():
			release()
			return ctx.Err()
		}
	}
}

// subscribe returns the channel the key's next Append closes, and the
// function to call when no longer waiting on it.
func (s *BoltStore) subscribe(key ThreadKey) (<-chan struct{}, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, s.closedError()
	}
	w := s.waiters[key]
	if w == nil {
		w = &boltWaiters{ch: make(chan struct{})}
		s.waiters[key] = w
	}
	w.n++
	return w.ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		// The map holds only keys with a Wait in progress, so it stays as
		// small as the number of tailing clients.
		if w.n--; w.n == 0 && s.waiters[key] == w {
			delete(s.waiters, key)
		}
	}, nil
}

func (s *BoltStore) notify(key ThreadKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.waiters[key]; w != nil {
		close(w.ch)
		delete(s.waiters, key)
	}
}

func (s *BoltStore) closedError() error {
	return fmt.Errorf("tasks: bolt store %s: %w", s.path, bolterrors.ErrDatabaseNotOpen)
}

// IndexInterrupt implements Store.
func (s *BoltStore) IndexInterrupt(ctx context.Context, id string, key ThreadKey) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketInterrupts).Put([]byte(id), boltKey(key))
	})
	if err != nil {
		return fmt.Errorf("tasks: index interrupt %s: %w", id, err)
	}
	return nil
}

// InterruptThread implements Store.
func (s *BoltStore) InterruptThread(ctx context.Context, id string) (ThreadKey, error) {
	if err := ctx.Err(); err != nil {
		return ThreadKey{}, err
	}
	var key ThreadKey
	found := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketInterrupts).Get([]byte(id))
		if v == nil {
			return nil
		}
		agent, thread, ok := strings.Cut(string(v), "\x00")
		if !ok {
			return fmt.Errorf("malformed thread key %q", v)
		}
		key, found = ThreadKey{Agent: agent, ThreadID: thread}, true
		return nil
	})
	if err != nil {
		return ThreadKey{}, fmt.Errorf("tasks: interrupt %s: %w", id, err)
	}
	if !found {
		return ThreadKey{}, ErrNotFound
	}
	return key, nil
}

// Ping implements Store.
func (s *BoltStore) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketThreads) == nil || tx.Bucket(bucketJournal) == nil {
			return errors.New("buckets missing")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tasks: ping bolt store %s: %w", s.path, err)
	}
	return nil
}

// Close ends every Wait and closes the file, after bbolt lets running
// transactions finish. Calling it again does nothing.
func (s *BoltStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("tasks: close bolt store %s: %w", s.path, err)
	}
	return nil
}
