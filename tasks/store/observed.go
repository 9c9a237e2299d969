package store

import (
	"context"
	"errors"
	"sync"
	"time"
)

// StoreObserver is told about store operations, for metrics (Observe).
// Its methods are called concurrently.
type StoreObserver interface {
	// StoreOp reports one operation of the backend. failed is true for an
	// error other than ErrNotFound, ErrConflict (answers, not failures)
	// and the caller's context ending.
	StoreOp(backend, op string, elapsed time.Duration, failed bool)
	// PendingInterrupts reports the agent's number of pending interrupts
	// whenever it changes.
	PendingInterrupts(agent string, n int)
}

// ObservedStore is a Store that reports every operation's latency to a
// StoreObserver, and counts the pending interrupts of the threads it
// reads and writes.
//
// The count is per process: exact for an exclusive store once seeded
// (CountInterrupts), since every change goes through this process; with a
// shared store it covers the threads this process last read or wrote.
// Wait is not timed: it blocks until a run appends, so its duration says
// nothing about the store.
type ObservedStore struct {
	Store
	backend string
	obs     StoreObserver

	mu       sync.Mutex
	pending  map[ThreadKey]int // threads with pending interrupts
	perAgent map[string]int
}

var _ Store = (*ObservedStore)(nil)

// Observe wraps s; backend names it in the observer's reports
// ("memory", "embedded", "redis").
func Observe(s Store, backend string, obs StoreObserver) *ObservedStore {
	return &ObservedStore{Store: s, backend: backend, obs: obs,
		pending: make(map[ThreadKey]int), perAgent: make(map[string]int)}
}

// interruptCounter is implemented by stores that can list the threads
// holding pending interrupts in one pass (memory, embedded).
type interruptCounter interface {
	PendingInterrupts(ctx context.Context) (map[ThreadKey]int, error)
}

// CountInterrupts seeds the pending-interrupt count from the store, when
// the backend can list them (memory and embedded: one pass over the
// threads, as Recover makes at start); with other backends the count
// starts empty.
func (s *ObservedStore) CountInterrupts(ctx context.Context) error {
	c, ok := s.Store.(interruptCounter)
	if !ok {
		return nil
	}
	start := time.Now()
	counts, err := c.PendingInterrupts(ctx)
	s.done("PendingInterrupts", start, err)
	if err != nil {
		return err
	}
	for key, n := range counts {
		s.note(key, n)
	}
	return nil
}

// note records that key's thread holds n pending interrupts.
func (s *ObservedStore) note(key ThreadKey, n int) {
	s.mu.Lock()
	old := s.pending[key]
	if old == n {
		s.mu.Unlock()
		return
	}
	if n == 0 {
		delete(s.pending, key)
	} else {
		s.pending[key] = n
	}
	total := s.perAgent[key.Agent] + n - old
	s.perAgent[key.Agent] = total
	s.mu.Unlock()
	s.obs.PendingInterrupts(key.Agent, total)
}

func (s *ObservedStore) done(op string, start time.Time, err error) {
	failed := err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrConflict) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	s.obs.StoreOp(s.backend, op, time.Since(start), failed)
}

// GetThread implements Store.
func (s *ObservedStore) GetThread(ctx context.Context, key ThreadKey) (*Thread, error) {
	start := time.Now()
	th, err := s.Store.GetThread(ctx, key)
	s.done("GetThread", start, err)
	switch {
	case err == nil:
		s.note(key, len(th.Interrupts))
	case errors.Is(err, ErrNotFound):
		s.note(key, 0)
	}
	return th, err
}

// PutThread implements Store.
func (s *ObservedStore) PutThread(ctx context.Context, th *Thread) (int64, error) {
	start := time.Now()
	v, err := s.Store.PutThread(ctx, th)
	s.done("PutThread", start, err)
	if err == nil {
		s.note(th.Key, len(th.Interrupts))
	}
	return v, err
}

// PutThreadAndAppend implements Store.
func (s *ObservedStore) PutThreadAndAppend(ctx context.Context, th *Thread, entries ...Entry) (int64, error) {
	start := time.Now()
	v, err := s.Store.PutThreadAndAppend(ctx, th, entries...)
	s.done("PutThreadAndAppend", start, err)
	if err == nil {
		s.note(th.Key, len(th.Interrupts))
	}
	return v, err
}

// ActiveThreads implements Store.
func (s *ObservedStore) ActiveThreads(ctx context.Context) ([]ThreadKey, error) {
	start := time.Now()
	keys, err := s.Store.ActiveThreads(ctx)
	s.done("ActiveThreads", start, err)
	return keys, err
}

// LapsedLeases implements LeaseLister: the wrapped store's, or its active
// threads when it has none (the scan checks each lease itself).
func (s *ObservedStore) LapsedLeases(ctx context.Context, now time.Time) ([]ThreadKey, error) {
	l, ok := s.Store.(LeaseLister)
	if !ok {
		return s.ActiveThreads(ctx)
	}
	start := time.Now()
	keys, err := l.LapsedLeases(ctx, now)
	s.done("LapsedLeases", start, err)
	return keys, err
}

// DeleteThread implements Store.
func (s *ObservedStore) DeleteThread(ctx context.Context, key ThreadKey, version int64) error {
	start := time.Now()
	err := s.Store.DeleteThread(ctx, key, version)
	s.done("DeleteThread", start, err)
	if err == nil {
		s.note(key, 0)
	}
	return err
}

// Append implements Store.
func (s *ObservedStore) Append(ctx context.Context, key ThreadKey, entries ...Entry) error {
	start := time.Now()
	err := s.Store.Append(ctx, key, entries...)
	s.done("Append", start, err)
	return err
}

// Read implements Store.
func (s *ObservedStore) Read(ctx context.Context, key ThreadKey, after int64, limit int) ([]Entry, error) {
	start := time.Now()
	entries, err := s.Store.Read(ctx, key, after, limit)
	s.done("Read", start, err)
	return entries, err
}

// TrimJournal implements Store.
func (s *ObservedStore) TrimJournal(ctx context.Context, key ThreadKey, upTo int64) error {
	start := time.Now()
	err := s.Store.TrimJournal(ctx, key, upTo)
	s.done("TrimJournal", start, err)
	return err
}

// LastSeq implements Store.
func (s *ObservedStore) LastSeq(ctx context.Context, key ThreadKey) (int64, error) {
	start := time.Now()
	seq, err := s.Store.LastSeq(ctx, key)
	s.done("LastSeq", start, err)
	return seq, err
}

// IndexInterrupt implements Store.
func (s *ObservedStore) IndexInterrupt(ctx context.Context, interruptID string, key ThreadKey) error {
	start := time.Now()
	err := s.Store.IndexInterrupt(ctx, interruptID, key)
	s.done("IndexInterrupt", start, err)
	return err
}

// InterruptThread implements Store.
func (s *ObservedStore) InterruptThread(ctx context.Context, principal, interruptID string) (ThreadKey, error) {
	start := time.Now()
	key, err := s.Store.InterruptThread(ctx, principal, interruptID)
	s.done("InterruptThread", start, err)
	return key, err
}

// Ping implements Store.
func (s *ObservedStore) Ping(ctx context.Context) error {
	start := time.Now()
	err := s.Store.Ping(ctx)
	s.done("Ping", start, err)
	return err
}

// ListThreads implements Store.
func (s *ObservedStore) ListThreads(ctx context.Context, q ListQuery) (ThreadPage, error) {
	start := time.Now()
	page, err := s.Store.ListThreads(ctx, q)
	failure := err
	if errors.Is(err, ErrBadCursor) {
		failure = nil // the caller's mistake, not the store's failure
	}
	s.done("ListThreads", start, failure)
	return page, err
}

// CountThreads implements Store.
func (s *ObservedStore) CountThreads(ctx context.Context, principal string) (int, error) {
	start := time.Now()
	n, err := s.Store.CountThreads(ctx, principal)
	s.done("CountThreads", start, err)
	return n, err
}

// PurgeThread implements Store.
func (s *ObservedStore) PurgeThread(ctx context.Context, key ThreadKey, version int64) error {
	start := time.Now()
	err := s.Store.PurgeThread(ctx, key, version)
	s.done("PurgeThread", start, err)
	if err == nil || errors.Is(err, ErrNotFound) {
		s.note(key, 0)
	}
	return err
}

// IdleThreads implements Store.
func (s *ObservedStore) IdleThreads(ctx context.Context, before time.Time, limit int) ([]ThreadSummary, error) {
	start := time.Now()
	out, err := s.Store.IdleThreads(ctx, before, limit)
	s.done("IdleThreads", start, err)
	return out, err
}
