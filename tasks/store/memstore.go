package store

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"
)

// MemoryStore keeps everything in process memory. It is for tests and
// single-process trials: nothing survives a restart.
type MemoryStore struct {
	mu         sync.Mutex
	threads    map[ThreadKey]*memThread
	interrupts map[memInterrupt]ThreadKey
}

// memInterrupt names an interrupt in the index: its id among its
// principal's.
type memInterrupt struct{ principal, id string }

type memThread struct {
	rec     *Thread
	journal []Entry
	// changed is what waiters wait on, made by the first Wait after an
	// Append and closed (then dropped) by the next Append: an Append
	// nobody waits for makes no channel.
	changed chan struct{}
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{threads: make(map[ThreadKey]*memThread), interrupts: make(map[memInterrupt]ThreadKey)}
}

func (m *MemoryStore) thread(key ThreadKey) *memThread {
	t := m.threads[key]
	if t == nil {
		t = &memThread{}
		m.threads[key] = t
	}
	return t
}

// GetThread implements Store.
func (m *MemoryStore) GetThread(_ context.Context, key ThreadKey) (*Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[key]
	if t == nil || t.rec == nil {
		return nil, ErrNotFound
	}
	return t.rec.Clone(), nil
}

// PutThread implements Store.
func (m *MemoryStore) PutThread(_ context.Context, th *Thread) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.put(th)
}

// PutThreadAndAppend implements Store.
func (m *MemoryStore) PutThreadAndAppend(_ context.Context, th *Thread, entries ...Entry) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.appendable(th.Key, entries) {
		return 0, ErrConflict
	}
	v, err := m.put(th)
	if err != nil {
		return 0, err
	}
	m.append(th.Key, entries)
	return v, nil
}

// put stores th under its version check; m.mu is held.
func (m *MemoryStore) put(th *Thread) (int64, error) {
	t := m.thread(th.Key)
	var current int64
	if t.rec != nil {
		current = t.rec.Version
	}
	if th.Version != current {
		return 0, ErrConflict
	}
	rec := th.Clone()
	Stamp(rec, time.Now())
	rec.Version = current + 1
	t.rec = rec
	return rec.Version, nil
}

// ActiveThreads implements Store.
func (m *MemoryStore) ActiveThreads(context.Context) ([]ThreadKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ThreadKey
	for k, t := range m.threads {
		if t.rec != nil && t.rec.Active != nil {
			out = append(out, k)
		}
	}
	return out, nil
}

// DeleteThread implements Store.
func (m *MemoryStore) DeleteThread(_ context.Context, key ThreadKey, version int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[key]
	if t == nil || t.rec == nil {
		return ErrNotFound
	}
	if t.rec.Version != version {
		return ErrConflict
	}
	t.rec = nil
	return nil
}

// Append implements Store.
func (m *MemoryStore) Append(_ context.Context, key ThreadKey, entries ...Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.appendable(key, entries) {
		return ErrConflict
	}
	m.append(key, entries)
	return nil
}

// appendable checks the entries' numbering against the journal; m.mu is
// held.
func (m *MemoryStore) appendable(key ThreadKey, entries []Entry) bool {
	var last int64
	if t := m.threads[key]; t != nil && len(t.journal) > 0 {
		last = t.journal[len(t.journal)-1].Seq
	}
	for _, e := range entries {
		if e.Seq <= last {
			return false
		}
		last = e.Seq
	}
	return true
}

// append stores checked entries; m.mu is held.
func (m *MemoryStore) append(key ThreadKey, entries []Entry) {
	if len(entries) == 0 {
		return
	}
	t := m.thread(key)
	for _, e := range entries {
		e.Event = append([]byte(nil), e.Event...)
		t.journal = append(t.journal, e)
	}
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// lastSeq is the journal's last number; the store's mu is held.
func (t *memThread) lastSeq() int64 {
	if len(t.journal) == 0 {
		return 0
	}
	return t.journal[len(t.journal)-1].Seq
}

// Read implements Store.
func (m *MemoryStore) Read(_ context.Context, key ThreadKey, after int64, limit int) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[key]
	if t == nil {
		return nil, nil
	}
	i := sort.Search(len(t.journal), func(i int) bool { return t.journal[i].Seq > after })
	rest := t.journal[i:]
	if limit > 0 && len(rest) > limit {
		rest = rest[:limit]
	}
	if len(rest) == 0 {
		return nil, nil
	}
	return append([]Entry(nil), rest...), nil
}

// TrimJournal implements Store.
func (m *MemoryStore) TrimJournal(_ context.Context, key ThreadKey, upTo int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[key]
	if t == nil || len(t.journal) < 2 {
		return nil
	}
	n := sort.Search(len(t.journal)-1, func(i int) bool { return t.journal[i].Seq > upTo })
	if n > 0 {
		// A fresh slice, so the trimmed entries' memory is let go.
		t.journal = append([]Entry(nil), t.journal[n:]...)
	}
	return nil
}

// LastSeq implements Store.
func (m *MemoryStore) LastSeq(_ context.Context, key ThreadKey) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.threads[key]; t != nil {
		return t.lastSeq(), nil
	}
	return 0, nil
}

// Wait implements Store.
func (m *MemoryStore) Wait(ctx context.Context, key ThreadKey, after int64) error {
	m.mu.Lock()
	t := m.thread(key)
	if t.lastSeq() > after {
		m.mu.Unlock()
		return nil
	}
	if JournalGone(t.lastSeq(), after) {
		m.mu.Unlock()
		return ErrNotFound
	}
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	ch := t.changed
	m.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// IndexInterrupt implements Store.
func (m *MemoryStore) IndexInterrupt(_ context.Context, id string, key ThreadKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.interrupts[memInterrupt{key.Principal, id}] = key
	return nil
}

// InterruptThread implements Store.
func (m *MemoryStore) InterruptThread(_ context.Context, principal, id string) (ThreadKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key, ok := m.interrupts[memInterrupt{principal, id}]
	if !ok {
		return ThreadKey{}, ErrNotFound
	}
	return key, nil
}

// Ping implements Store.
func (m *MemoryStore) Ping(context.Context) error { return nil }

// Close implements Store.
func (m *MemoryStore) Close() error { return nil }

// PendingInterrupts returns the threads holding pending interrupts and how
// many each holds (Observed.CountInterrupts seeds its count with it).
func (m *MemoryStore) PendingInterrupts(_ context.Context) (map[ThreadKey]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[ThreadKey]int)
	for key, t := range m.threads {
		if t.rec != nil && len(t.rec.Interrupts) > 0 {
			out[key] = len(t.rec.Interrupts)
		}
	}
	return out, nil
}

// ListThreads implements Store: it sorts the principal's records, which is
// fine for the store of tests.
func (m *MemoryStore) ListThreads(_ context.Context, q ListQuery) (ThreadPage, error) {
	var after *ThreadSummary
	if q.Cursor != "" {
		c, err := ParseCursor(q.Cursor)
		if err != nil {
			return ThreadPage{}, err
		}
		after = &c
	}
	m.mu.Lock()
	var out []ThreadSummary
	for k, t := range m.threads {
		if t.rec == nil || k.Principal != q.Principal || !q.Wants(k.Agent) {
			continue
		}
		s := Summarize(t.rec, t.rec.Version)
		if after == nil || CompareSummaries(*after, s) < 0 {
			out = append(out, s)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, CompareSummaries)
	return Page(out, max(q.Limit, 1)), nil
}

// CountThreads implements Store.
func (m *MemoryStore) CountThreads(_ context.Context, principal string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k, t := range m.threads {
		if t.rec != nil && k.Principal == principal {
			n++
		}
	}
	return n, nil
}

// PurgeThread implements Store.
func (m *MemoryStore) PurgeThread(_ context.Context, key ThreadKey, version int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[key]
	if t == nil {
		return ErrNotFound
	}
	if t.rec != nil && version > 0 && t.rec.Version != version {
		return ErrConflict
	}
	if t.rec != nil {
		for _, id := range InterruptIDs(t.rec) {
			if m.interrupts[memInterrupt{key.Principal, id}] == key {
				delete(m.interrupts, memInterrupt{key.Principal, id})
			}
		}
	}
	found := t.rec != nil
	delete(m.threads, key)
	if t.changed != nil {
		close(t.changed) // its Waits find the journal gone
	}
	if !found {
		return ErrNotFound
	}
	return nil
}

// IdleThreads implements Store.
func (m *MemoryStore) IdleThreads(_ context.Context, before time.Time, limit int) ([]ThreadSummary, error) {
	m.mu.Lock()
	var out []ThreadSummary
	for _, t := range m.threads {
		if t.rec != nil && t.rec.Active == nil && t.rec.UpdatedAt.Before(before) {
			out = append(out, Summarize(t.rec, t.rec.Version))
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b ThreadSummary) int { return -CompareSummaries(a, b) })
	return out[:min(len(out), limit)], nil
}
