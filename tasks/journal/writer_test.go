package journal

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// gatedStore is a memory store whose appends say on entered that they
// began, then wait for a value on gate.
type gatedStore struct {
	*store.MemoryStore
	entered, gate chan struct{}
}

func (g *gatedStore) Append(ctx context.Context, key store.ThreadKey, entries ...store.Entry) error {
	g.entered <- struct{}{}
	<-g.gate
	return g.MemoryStore.Append(ctx, key, entries...)
}

// batchLog records the batches a journal writer hands on.
type batchLog struct {
	mu      sync.Mutex
	batches [][]int64
}

func (b *batchLog) stored(batch []store.Entry) {
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

func entry(seq int64) store.Entry { return store.Entry{Seq: seq, RunID: "r1", Event: []byte(`{}`)} }

// TestJournalWriterHandsSlowAppendsOn: while an append to a slow store is
// in flight, add returns at once and what is added meanwhile goes to the
// store as one batch after it, in order.
func TestJournalWriterHandsSlowAppendsOn(t *testing.T) {
	st := &gatedStore{MemoryStore: store.NewMemoryStore(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	var log batchLog
	key := store.ThreadKey{Agent: "a", ThreadID: "t"}
	w := NewWriter(t.Context(), st, key, time.Second, slog.Default(), log.stored)
	w.inlineBelow = 0 // no append is fast enough to be made by the caller

	returned := make(chan struct{})
	go func() {
		w.Add([]store.Entry{entry(1)})
		<-st.entered // the first batch is in flight
		w.Add([]store.Entry{entry(2)})
		w.Add([]store.Entry{entry(3), entry(4)})
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
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := [][]int64{{1}, {2, 3, 4}}; !slices.EqualFunc(log.got(), want, slices.Equal) {
		t.Fatalf("batches handed on %v, want %v", log.got(), want)
	}
	// The next add after the writer went idle again is handed on as well.
	w.Add([]store.Entry{entry(5)})
	<-st.entered
	st.gate <- struct{}{}
	if err := w.Flush(); err != nil {
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
	key := store.ThreadKey{Agent: "a", ThreadID: "t"}
	w := NewWriter(t.Context(), st, key, time.Second, slog.Default(), log.stored)
	w.inlineBelow = time.Hour // every append is fast enough

	w.Add([]store.Entry{entry(1)}) // the first is handed on: nothing measured yet
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for seq := int64(2); seq <= 50; seq++ {
		w.Add([]store.Entry{entry(seq)})
		if last, _ := st.LastSeq(t.Context(), key); last != seq {
			t.Fatalf("after add(%d) returned the journal ends at %d", seq, last)
		}
		if pending, err := w.Progress(); pending != 0 || err != nil {
			t.Fatalf("after add(%d): %d pending, %v", seq, pending, err)
		}
	}
	got := log.got()
	if len(got) != 50 || got[49][0] != 50 {
		t.Fatalf("batches handed on: %v", got)
	}
}

func textDelta(seq int64, msg, delta string) store.Entry {
	b, _ := agui.Marshal(&agui.TextMessageContent{MessageID: msg, Delta: delta})
	return store.Entry{Seq: seq, RunID: "r1", Event: b}
}

func stateDelta(seq int64, path string) store.Entry {
	b, _ := agui.Marshal(&agui.StateDelta{Delta: []agui.PatchOp{{Op: "add", Path: path, Value: json.RawMessage(`1`)}}})
	return store.Entry{Seq: seq, RunID: "r1", Event: b}
}

// TestJournalWriterMergesWhatQueued: the deltas that queue while an append
// is in flight are merged — consecutive text deltas of one message into
// one, consecutive state patches into one — and the journal stays numbered
// without gaps, the terminal event (written with the release) included.
// What an idle writer is given is written as it is.
func TestJournalWriterMergesWhatQueued(t *testing.T) {
	st := &gatedStore{MemoryStore: store.NewMemoryStore(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	var log batchLog
	key := store.ThreadKey{Agent: "a", ThreadID: "t"}
	w := NewWriter(t.Context(), st, key, time.Second, slog.Default(), log.stored)
	w.inlineBelow, w.mergeAbove = 0, 0

	// A first append, timed: the store is slow (mergeAbove 0), so what
	// queues from now on is merged.
	w.Add([]store.Entry{entry(1)})
	<-st.entered
	st.gate <- struct{}{}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	w.Add([]store.Entry{textDelta(2, "m1", "a")}) // idle: in flight as it is
	<-st.entered
	w.Add([]store.Entry{textDelta(3, "m1", "b"), textDelta(4, "m1", "c")})
	w.Add([]store.Entry{textDelta(5, "m1", "d"), textDelta(6, "m2", "e"), entry(7)})
	w.Add([]store.Entry{stateDelta(8, "/x"), stateDelta(9, "/y"), textDelta(10, "m2", "f")})
	st.gate <- struct{}{}
	<-st.entered
	st.gate <- struct{}{}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	end := w.Renumbered(store.Entry{Seq: 11, RunID: "r1", Event: []byte(`{"type":"RUN_FINISHED"}`), Terminal: true})
	if end.Seq != 8 {
		t.Errorf("the terminal event numbered %d after the merges, want 8", end.Seq)
	}
	if again := w.Renumbered(end); again.Seq != end.Seq {
		t.Errorf("a renumbered event renumbered again: %d, want %d", again.Seq, end.Seq)
	}
	if want := [][]int64{{1}, {2}, {3, 4, 5, 6, 7}}; !slices.EqualFunc(log.got(), want, slices.Equal) {
		t.Fatalf("batches handed on %v, want %v", log.got(), want)
	}
	got, err := st.Read(t.Context(), key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, e := range got {
		events = append(events, string(e.Event))
	}
	want := []string{
		`{}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"bcd"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"e"}`,
		`{}`,
		`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/x","value":1},{"op":"add","path":"/y","value":1}]}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"f"}`,
	}
	if !slices.Equal(events, want) {
		t.Fatalf("journal:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
}

// TestJournalWriterMergesNothingIdle: deltas given to an idle writer (no
// append in flight) are written one event each, as they came; so are those
// that queue behind an append to a fast store (the memory store's).
func TestJournalWriterMergesNothingIdle(t *testing.T) {
	st := store.NewMemoryStore()
	key := store.ThreadKey{Agent: "a", ThreadID: "t"}
	w := NewWriter(t.Context(), st, key, time.Second, slog.Default(), nil)
	for i := range int64(3) {
		w.Add([]store.Entry{textDelta(i+1, "m1", "x")})
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := st.Read(t.Context(), key, 0, 0); len(got) != 3 {
		t.Fatalf("%d events in the journal, want 3", len(got))
	}

	fast := &gatedStore{MemoryStore: store.NewMemoryStore(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	w = NewWriter(t.Context(), fast, key, time.Second, slog.Default(), nil)
	w.inlineBelow, w.mergeAbove = time.Hour, time.Hour // every append counts as fast
	w.Add([]store.Entry{textDelta(1, "m1", "x")})
	<-fast.entered
	w.Add([]store.Entry{textDelta(2, "m1", "y"), textDelta(3, "m1", "z")})
	fast.gate <- struct{}{}
	<-fast.entered // what queued, as one batch
	fast.gate <- struct{}{}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, _ := fast.Read(t.Context(), key, 0, 0); len(got) != 3 {
		t.Fatalf("%d events in the fast store's journal, want 3 (nothing merged)", len(got))
	}
}
