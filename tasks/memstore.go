package tasks

import (
	"context"
	"sync"
	"time"
)

// MemoryStore keeps everything in process memory. It is for tests and
// single-process trials: nothing survives a restart.
type MemoryStore struct {
	mu         sync.Mutex
	threads    map[ThreadKey]*memThread
	interrupts map[string]ThreadKey
}

type memThread struct {
	rec     *Thread
	journal []Entry
	// changed is closed and replaced on every Append, waking waiters.
	changed chan struct{}
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{threads: make(map[ThreadKey]*memThread), interrupts: make(map[string]ThreadKey)}
}

func (m *MemoryStore) thread(key ThreadKey) *memThread {
	t := m.threads[key]
	if t == nil {
		t = &memThread{changed: make(chan struct{})}
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
	rec.Version = current + 1
	rec.UpdatedAt = time.Now()
	t.rec = rec
	return rec.Version, nil
}

// ActiveThreads implements Store.
func (m *MemoryStore) ActiveThreads(context.Context) ([]ThreadKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ThreadKey
	for k, t := range m.threads {
		if t.rec != nil && t.rec.ActiveRunID != "" {
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
func (m *MemoryStore) Append(_ context.Context, key ThreadKey, entries ...Entry) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.append(key, entries), nil
}

// append numbers and stores entries; m.mu is held.
func (m *MemoryStore) append(key ThreadKey, entries []Entry) int64 {
	t := m.thread(key)
	seq := int64(len(t.journal))
	for _, e := range entries {
		seq++
		e.Seq = seq
		e.Event = append([]byte(nil), e.Event...)
		t.journal = append(t.journal, e)
	}
	if len(entries) > 0 {
		close(t.changed)
		t.changed = make(chan struct{})
	}
	return seq
}

// Read implements Store.
func (m *MemoryStore) Read(_ context.Context, key ThreadKey, after int64, limit int) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[key]
	if t == nil || after >= int64(len(t.journal)) {
		return nil, nil
	}
	if after < 0 {
		after = 0
	}
	rest := t.journal[after:]
	if limit > 0 && len(rest) > limit {
		rest = rest[:limit]
	}
	return append([]Entry(nil), rest...), nil
}

// LastSeq implements Store.
func (m *MemoryStore) LastSeq(_ context.Context, key ThreadKey) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.threads[key]; t != nil {
		return int64(len(t.journal)), nil
	}
	return 0, nil
}

// Wait implements Store.
func (m *MemoryStore) Wait(ctx context.Context, key ThreadKey, after int64) error {
	m.mu.Lock()
	t := m.thread(key)
	if int64(len(t.journal)) > after {
		m.mu.Unlock()
		return nil
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
	m.interrupts[id] = key
	return nil
}

// InterruptThread implements Store.
func (m *MemoryStore) InterruptThread(_ context.Context, id string) (ThreadKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key, ok := m.interrupts[id]
	if !ok {
		return ThreadKey{}, ErrNotFound
	}
	return key, nil
}

// Ping implements Store.
func (m *MemoryStore) Ping(context.Context) error { return nil }

// Close implements Store.
func (m *MemoryStore) Close() error { return nil }
