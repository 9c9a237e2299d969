package tasks

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// gatedStore is a memory store whose appends say on entered that they
// began, then wait for a value on gate.
type gatedStore struct {
	*store.MemoryStore
	entered, gate chan struct{}
}

func (g *gatedStore) Append(ctx context.Context, key ThreadKey, entries ...Entry) error {
	g.entered <- struct{}{}
	<-g.gate
	return g.MemoryStore.Append(ctx, key, entries...)
}

// batchLog records the batches a journal writer hands on.
type batchLog struct {
	mu      sync.Mutex
	batches [][]int64
}

func (b *batchLog) stored(batch []Entry) {
	var seqs []int64
	for _, e := range batch {
		seqs = append(seqs, e.Seq)
	}
	b.mu.Lock()
	b.batches = append(b.batches, seqs)
	b.mu.Unlock()
}

func (b *batchLog) got() [][]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.batches)
}

func entry(seq int64) Entry { return Entry{Seq: seq, RunID: "r1", Event: []byte(`{}`)} }

// TestJournalWriterHandsSlowAppendsOn: while an append to a slow store is
// in flight, add returns at once and what is added meanwhile goes to the
// store as one batch after it, in order.
func TestJournalWriterHandsSlowAppendsOn(t *testing.T) {
	st := &gatedStore{MemoryStore: store.NewMemoryStore(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	var log batchLog
	key := ThreadKey{Agent: "a", ThreadID: "t"}
	w := newJournalWriter(t.Context(), st, key, time.Second, slog.Default(), log.stored)
	w.inlineBelow = 0 // no append is fast enough to be made by the caller

	returned := make(chan struct{})
	go func() {
		w.add([]Entry{entry(1)})
		<-st.entered // the first batch is in flight
		w.add([]Entry{entry(2)})
		w.add([]Entry{entry(3), entry(4)})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("add waited for a store that had not answered")
	}
	st.gate <- struct{}{} // the first batch
	<-st.entered
	st.gate <- struct{}{} // what came while it was in flight
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	if want := [][]int64{{1}, {2, 3, 4}}; !slices.EqualFunc(log.got(), want, slices.Equal) {
		t.Fatalf("batches handed on %v, want %v", log.got(), want)
	}
	// The next add after the writer went idle again is handed on as well.
	w.add([]Entry{entry(5)})
	<-st.entered
	st.gate <- struct{}{}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	if last, _ := st.LastSeq(t.Context(), key); last != 5 {
		t.Fatalf("journal ends at %d, want 5", last)
	}
}

// TestJournalWriterMakesFastAppendsItself: once an append came back
// within inlineBelow, the next one is made by the caller: add returns with
// its entries stored and handed on, and nothing is left in flight.
func TestJournalWriterMakesFastAppendsItself(t *testing.T) {
	st := store.NewMemoryStore()
	var log batchLog
	key := ThreadKey{Agent: "a", ThreadID: "t"}
	w := newJournalWriter(t.Context(), st, key, time.Second, slog.Default(), log.stored)
	w.inlineBelow = time.Hour // every append is fast enough

	w.add([]Entry{entry(1)}) // the first is handed on: nothing measured yet
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	for seq := int64(2); seq <= 50; seq++ {
		w.add([]Entry{entry(seq)})
		if last, _ := st.LastSeq(t.Context(), key); last != seq {
			t.Fatalf("after add(%d) returned the journal ends at %d", seq, last)
		}
		if pending, err := w.progress(); pending != 0 || err != nil {
			t.Fatalf("after add(%d): %d pending, %v", seq, pending, err)
		}
	}
	got := log.got()
	if len(got) != 50 || got[49][0] != 50 {
		t.Fatalf("batches handed on: %v", got)
	}
}
