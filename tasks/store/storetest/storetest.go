package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/mapping"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// Run checks the store returned by open against the Store contract. Every
// subtest runs in parallel on a store of its own: open must return a new,
// empty store each time, and may use t (t.TempDir, t.Cleanup) for its
// resources. Run closes each store when its subtest ends, so Close must be
// safe to call twice (the Close subtest calls it first).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"GetMissing", testGetMissing},
		{"PutCreates", testPutCreates},
		{"PutUpdates", testPutUpdates},
		{"PutStale", testPutStale},
		{"PutConcurrent", testPutConcurrent},
		{"GetCopies", testGetCopies},
		{"Delete", testDelete},
		{"AppendNumbers", testAppendNumbers},
		{"AppendKeepsFields", testAppendKeepsFields},
		{"AppendCopies", testAppendCopies},
		{"AppendConcurrent", testAppendConcurrent},
		{"Read", testRead},
		{"LastSeq", testLastSeq},
		{"TrimJournal", testTrimJournal},
		{"WaitReady", testWaitReady},
		{"WaitWakes", testWaitWakes},
		{"WaitCancel", testWaitCancel},
		{"IndependentKeys", testIndependentKeys},
		{"InterruptIndex", testInterruptIndex},
		{"PutAndAppend", testPutAndAppend},
		{"PutAndAppendStale", testPutAndAppendStale},
		{"ActiveThreads", testActiveThreads},
		{"Ping", testPing},
		{"Close", testClose},
		{"ListThreads", testListThreads},
		{"ListThreadsPages", testListThreadsPages},
		{"CountThreads", testCountThreads},
		{"PurgeThread", testPurgeThread},
		{"IdleThreads", testIdleThreads},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// threadOpts compare threads as the caller sees them: the store stamps
// UpdatedAt itself, and an empty slice may come back as nil.
var threadOpts = cmp.Options{
	cmpopts.IgnoreFields(store.Thread{}, "UpdatedAt", "CreatedAt"),
	cmpopts.EquateEmpty(),
}

var entryOpts = cmp.Options{cmpopts.EquateEmpty()}

// sample returns a thread with every field set except the two the store
// owns (Version, UpdatedAt), so a round trip proves no field is dropped.
// checkSample fails when a new Thread field is left zero here.
func sample(key store.ThreadKey) *store.Thread {
	return &store.Thread{
		Key:            key,
		SeenMessageIDs: []string{"m1", "m2"},
		LastRunID:      "run-0",
		JournalFrom:    7,
		JournalBytes:   4096,
		Principal:      "alice",
		Active: &store.ActiveRun{
			RunID:           "run-1",
			Since:           time.Date(2026, 5, 1, 12, 30, 0, 123456789, time.UTC),
			Owner:           "instance-1",
			LeaseExpires:    time.Date(2026, 1, 2, 3, 4, 20, 0, time.UTC),
			Tasks:           map[string]string{"travel": "task-t"},
			CancelRequested: true,
			After:           12,
			Input:           json.RawMessage(`{"threadId":"t","runId":"run-1","messages":[]}`),
			Results: []mapping.SentToolResult{{Call: mapping.ToolCallRef{CallID: "c1", Name: "book", ToolCallID: "tc1"},
				Response: map[string]any{"approved": true}}},
			Resolved: []store.ResolvedInterrupt{{ID: "int-9", Status: "cancelled", RunID: "run-1", AfterSeq: 7, At: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}},
		},
		Messages: []agui.Message{
			{ID: "m1", Role: agui.RoleUser, Content: agui.TextContent("Book a flight")},
			{ID: "a1", Role: agui.RoleAssistant, Content: agui.TextContent("Approve?"), ToolCalls: []agui.ToolCall{
				{ID: "tc1", Type: "function", Function: agui.FunctionCall{Name: "book", Arguments: `{"n":2}`}}}},
		},
		State: json.RawMessage(`{"a2a":{"agent":"x"},"theme":"dark"}`),
		Interrupts: []mapping.PendingInterrupt{{
			Interrupt: agui.Interrupt{ID: "int-1", Reason: "tool_call", Message: "Approve?", ToolCallID: "tc1",
				ResponseSchema: map[string]any{"type": "object"}, Metadata: map[string]any{"a2a": map[string]any{"taskId": "task-1"}}},
			ExpiresAt: time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC), TaskID: "task-1", ContextID: "ctx-1",
			State: "TASK_STATE_INPUT_REQUIRED", ToolCall: &mapping.ToolCallRef{CallID: "c1", Name: "book", Args: json.RawMessage(`{"n":2}`), ToolCallID: "tc1"},
			Member: "travel",
		}},
		Resolved:      []store.ResolvedInterrupt{{ID: "int-0", Status: "resolved", PayloadHash: "ab", RunID: "run-0", AfterSeq: 3, At: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}},
		ToolCalls:     []mapping.ToolCallRef{{CallID: "c1", Name: "book", Args: json.RawMessage(`{"n":2}`), ToolCallID: "tc1"}},
		FrontendCalls: []mapping.ToolCallRef{{CallID: "f1", Name: "paint", Args: json.RawMessage(`{}`), ToolCallID: "tc2", Frontend: true}},
		StateVersion:  7,
		Members: map[string]*store.MemberRecord{
			"travel":  {ContextID: "ctx-t", TaskID: "task-t", TaskState: "TASK_STATE_COMPLETED", TaskArtifacts: []string{"a1"}},
			"weather": {ContextID: "ctx-w"},
		},
		Routed: "travel",
	}
}

func checkSample(t *testing.T, th *store.Thread) {
	t.Helper()
	v := reflect.ValueOf(*th)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "Version" || name == "UpdatedAt" || name == "CreatedAt" {
			continue
		}
		if v.Field(i).IsZero() {
			t.Errorf("storetest's sample thread leaves Thread.%s zero: set it so the round trip covers it", name)
		}
	}
}

func key(thread string) store.ThreadKey {
	return store.ThreadKey{Agent: "agent", ThreadID: thread}
}

func put(t *testing.T, s store.Store, th *store.Thread) int64 {
	t.Helper()
	v, err := s.PutThread(t.Context(), th)
	if err != nil {
		t.Fatalf("PutThread(%v, version %d): %v", th.Key, th.Version, err)
	}
	return v
}

func get(t *testing.T, s store.Store, k store.ThreadKey) *store.Thread {
	t.Helper()
	th, err := s.GetThread(t.Context(), k)
	if err != nil {
		t.Fatalf("GetThread(%v): %v", k, err)
	}
	return th
}

func appendEntries(t *testing.T, s store.Store, k store.ThreadKey, es ...store.Entry) {
	t.Helper()
	if err := s.Append(t.Context(), k, es...); err != nil {
		t.Fatalf("Append(%v, %d entries): %v", k, len(es), err)
	}
}

func read(t *testing.T, s store.Store, k store.ThreadKey, after int64, limit int) []store.Entry {
	t.Helper()
	es, err := s.Read(t.Context(), k, after, limit)
	if err != nil {
		t.Fatalf("Read(%v, after %d, limit %d): %v", k, after, limit, err)
	}
	return es
}

func lastSeq(t *testing.T, s store.Store, k store.ThreadKey) int64 {
	t.Helper()
	n, err := s.LastSeq(t.Context(), k)
	if err != nil {
		t.Fatalf("LastSeq(%v): %v", k, err)
	}
	return n
}

// event returns a distinct event; the whitespace is deliberate, since a
// journal must keep an event's bytes exactly, not re-encode them.
func event(n int) []byte {
	return fmt.Appendf(nil, "{\"type\": \"CUSTOM\",  \"n\": %d}\n", n)
}

// entries numbers event(from) .. event(to) from to to.
func entries(runID string, from, to int) []store.Entry {
	var es []store.Entry
	for n := from; n <= to; n++ {
		es = append(es, store.Entry{Seq: int64(n), RunID: runID, Event: event(n)})
	}
	return es
}

func seqs(es []store.Entry) []int64 {
	out := []int64{}
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

func testGetMissing(t *testing.T, s store.Store) {
	if _, err := s.GetThread(t.Context(), key("missing")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetThread(missing) error = %v, want ErrNotFound", err)
	}
}

func testPutCreates(t *testing.T, s store.Store) {
	want := sample(key("t"))
	checkSample(t, want)
	if v := put(t, s, want); v != 1 {
		t.Fatalf("PutThread(version 0) = %d, want 1", v)
	}
	want.Version = 1
	if diff := cmp.Diff(want, get(t, s, want.Key), threadOpts); diff != "" {
		t.Errorf("GetThread after create (-want +got):\n%s", diff)
	}
}

func testPutUpdates(t *testing.T, s store.Store) {
	th := sample(key("t"))
	th.Version = put(t, s, th)
	th.Routed = "weather"
	th.Active = nil
	th.SeenMessageIDs = append(th.SeenMessageIDs, "m3")
	if v := put(t, s, th); v != 2 {
		t.Fatalf("PutThread(version 1) = %d, want 2", v)
	}
	th.Version = 2
	if diff := cmp.Diff(th, get(t, s, th.Key), threadOpts); diff != "" {
		t.Errorf("GetThread after update (-want +got):\n%s", diff)
	}
}

func testPutStale(t *testing.T, s store.Store) {
	ctx := t.Context()
	th := sample(key("t"))
	put(t, s, th) // version 1
	th.Version = 1
	th.Routed = "weather"
	put(t, s, th) // version 2
	want := get(t, s, th.Key)

	for _, version := range []int64{0, 1, 3} {
		stale := want.Clone()
		stale.Version = version
		stale.Routed = fmt.Sprintf("stale-%d", version)
		if _, err := s.PutThread(ctx, stale); !errors.Is(err, store.ErrConflict) {
			t.Errorf("PutThread(version %d) with stored version 2: error = %v, want ErrConflict", version, err)
		}
	}
	if diff := cmp.Diff(want, get(t, s, th.Key), threadOpts); diff != "" {
		t.Errorf("a rejected PutThread wrote (-want +got):\n%s", diff)
	}

	// A version other than 0 for a thread that does not exist is stale too.
	ghost := sample(key("ghost"))
	ghost.Version = 4
	if _, err := s.PutThread(ctx, ghost); !errors.Is(err, store.ErrConflict) {
		t.Errorf("PutThread(version 4) of a missing thread: error = %v, want ErrConflict", err)
	}
	if _, err := s.GetThread(ctx, ghost.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetThread after rejected create: error = %v, want ErrNotFound", err)
	}
}

// testPutConcurrent is the race the bridge relies on to allow one active
// run per thread: writers that read the same version, one wins.
func testPutConcurrent(t *testing.T, s store.Store) {
	for _, from := range []int64{0, 1} { // create race, then update race
		const n = 16
		k := key(fmt.Sprintf("race-%d", from))
		if from == 1 {
			put(t, s, sample(k))
		}
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			results = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				th := sample(k)
				th.Version = from
				th.Active.RunID = fmt.Sprintf("run-%d", i)
				<-start
				_, results[i] = s.PutThread(t.Context(), th)
			})
		}
		close(start)
		wg.Wait()

		winner := -1
		for i, err := range results {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("version %d: writers %d and %d both won", from, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("version %d: writer %d: error = %v, want nil or ErrConflict", from, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("version %d: no writer won", from)
		}
		got := get(t, s, k)
		if got.Version != from+1 || got.Active.RunID != fmt.Sprintf("run-%d", winner) {
			t.Errorf("version %d: stored (version %d, run %q), want the winner's (version %d, run-%d)",
				from, got.Version, got.Active.RunID, from+1, winner)
		}
	}
}

func testGetCopies(t *testing.T, s store.Store) {
	in := sample(key("t"))
	put(t, s, in)
	want := get(t, s, in.Key)

	// Neither the caller's record nor a returned one aliases the store.
	in.SeenMessageIDs[0] = "changed-input"
	got := get(t, s, in.Key)
	got.SeenMessageIDs[0] = "changed-output"
	got.SeenMessageIDs = append(got.SeenMessageIDs, "more")
	got.Routed = "changed"
	if diff := cmp.Diff(want, get(t, s, in.Key), threadOpts); diff != "" {
		t.Errorf("mutating a Put or Get thread changed the store (-want +got):\n%s", diff)
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := key("t")
	put(t, s, sample(k))
	appendEntries(t, s, k, entries("run-1", 1, 2)...)

	if err := s.DeleteThread(ctx, k, 2); !errors.Is(err, store.ErrConflict) {
		t.Errorf("DeleteThread(wrong version) error = %v, want ErrConflict", err)
	}
	if got := get(t, s, k); got.Version != 1 {
		t.Errorf("after rejected DeleteThread, version = %d, want 1", got.Version)
	}
	if err := s.DeleteThread(ctx, k, 1); err != nil {
		t.Fatalf("DeleteThread(right version): %v", err)
	}
	if _, err := s.GetThread(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetThread after DeleteThread: error = %v, want ErrNotFound", err)
	}
	if err := s.DeleteThread(ctx, k, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteThread of a missing thread: error = %v, want ErrNotFound", err)
	}
	if got := seqs(read(t, s, k, 0, 10)); !cmp.Equal(got, []int64{1, 2}) {
		t.Errorf("journal after DeleteThread has seqs %v, want [1 2] (the journal stays)", got)
	}
	// A deleted thread can be created again.
	if _, err := s.PutThread(ctx, sample(k)); err != nil {
		t.Errorf("PutThread(version 0) after DeleteThread: %v", err)
	}
}

// testAppendNumbers: entries are stored under the numbers they carry,
// gaps allowed; a numbering that does not continue the journal is refused
// whole.
func testAppendNumbers(t *testing.T, s store.Store) {
	k := key("t")
	appendEntries(t, s, k, entries("run-1", 1, 3)...)
	appendEntries(t, s, k, entries("run-1", 4, 4)...)
	appendEntries(t, s, k) // nothing: fine
	// Numbers may skip.
	appendEntries(t, s, k, entries("run-2", 1030, 1031)...)
	want := []int64{1, 2, 3, 4, 1030, 1031}
	check := func(when string) {
		t.Helper()
		if diff := cmp.Diff(want, seqs(read(t, s, k, 0, 100))); diff != "" {
			t.Errorf("%s: journal seqs (-want +got):\n%s", when, diff)
		}
		if n := lastSeq(t, s, k); n != 1031 {
			t.Errorf("%s: LastSeq = %d, want 1031", when, n)
		}
	}
	check("after the appends")
	for name, bad := range map[string][]store.Entry{
		"a number already used":  entries("run-3", 1031, 1032),
		"a number below the end": entries("run-3", 5, 5),
		"numbers going down":     {{Seq: 1040, Event: event(1)}, {Seq: 1039, Event: event(2)}},
		"a number twice":         {{Seq: 1040, Event: event(1)}, {Seq: 1040, Event: event(2)}},
	} {
		if err := s.Append(t.Context(), k, bad...); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Append with %s: error %v, want ErrConflict", name, err)
		}
		check("after Append with " + name)
	}
	// Reads start after any number, in a gap too.
	if diff := cmp.Diff([]int64{1030, 1031}, seqs(read(t, s, k, 500, 100))); diff != "" {
		t.Errorf("Read after 500 (-want +got):\n%s", diff)
	}
}

func testAppendKeepsFields(t *testing.T, s store.Store) {
	k := key("t")
	in := []store.Entry{
		{RunID: "run-1", Event: []byte(`{"type":"RUN_STARTED","threadId":"t","runId":"run-1"}`)},
		{RunID: "run-1", Event: []byte("{ \"type\" : \"TEXT_MESSAGE_CONTENT\", \"delta\": \"caf\\u00e9 \u2603 <&>\" }\n")},
		{RunID: "run-1", Event: []byte(`{"type":"RUN_FINISHED"}`), Terminal: true},
		{RunID: "run-2", Event: []byte{}},
	}
	for i := range in {
		in[i].Seq = int64(i + 1)
	}
	appendEntries(t, s, k, in...)
	want := append([]store.Entry(nil), in...)
	if diff := cmp.Diff(want, read(t, s, k, 0, 100), entryOpts); diff != "" {
		t.Errorf("entries read back (-want +got):\n%s", diff)
	}
}

func testAppendCopies(t *testing.T, s store.Store) {
	k := key("t")
	in := []store.Entry{{Seq: 1, RunID: "run-1", Event: []byte(`{"type":"A"}`)}}
	appendEntries(t, s, k, in...)
	in[0].Event[2] = 'X' // the caller reuses its buffer

	// Only the Append side is checked: Store does not say whether Read's
	// Event slices may be modified, and MemoryStore returns its own.
	got := read(t, s, k, 0, 10)
	if len(got) != 1 || string(got[0].Event) != `{"type":"A"}` {
		t.Fatalf("after mutating the appended buffer, Read = %+v, want the original bytes", got)
	}
}

// testAppendConcurrent appends from many goroutines at once: each streams
// batches to its own thread (what concurrent runs do, and what a store may
// commit together), and all of them also race for the same numbers on one
// shared thread, where each number must be taken exactly once.
func testAppendConcurrent(t *testing.T, s store.Store) {
	const goroutines, appends = 8, 16
	shared := key("shared")
	won := make([][]int64, goroutines)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, goroutines*appends*2)
	for g := range goroutines {
		wg.Go(func() {
			<-start
			own := key(fmt.Sprint("own-", g))
			seq := int64(0)
			for i := range appends {
				var es []store.Entry
				for j := range 1 + i%3 {
					seq++
					es = append(es, store.Entry{Seq: seq, RunID: fmt.Sprint("run-", g), Event: fmt.Appendf(nil, `{"g":%d,"i":%d,"j":%d}`, g, i, j)})
				}
				if err := s.Append(t.Context(), own, es...); err != nil {
					errs <- fmt.Errorf("goroutine %d, own thread, append %d: %w", g, i, err)
				}
				n := int64(i + 1)
				err := s.Append(t.Context(), shared, store.Entry{Seq: n, RunID: fmt.Sprint("run-", g), Event: fmt.Appendf(nil, `{"g":%d}`, g)})
				switch {
				case err == nil:
					won[g] = append(won[g], n)
				case !errors.Is(err, store.ErrConflict):
					errs <- fmt.Errorf("goroutine %d, shared thread, seq %d: %w", g, n, err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for g := range goroutines {
		got := read(t, s, key(fmt.Sprint("own-", g)), 0, 1<<20)
		for i, e := range got {
			if e.Seq != int64(i+1) || e.RunID != fmt.Sprint("run-", g) {
				t.Fatalf("goroutine %d's thread: entry %d is %+v", g, i, e)
			}
		}
	}
	got := read(t, s, shared, 0, 1<<20)
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, seqs(got)); diff != "" {
		t.Fatalf("shared thread seqs (-want +got):\n%s", diff)
	}
	for g, seqs := range won {
		for _, n := range seqs {
			if want := fmt.Sprintf(`{"g":%d}`, g); string(got[n-1].Event) != want {
				t.Errorf("seq %d: goroutine %d was told it won, but the entry is %s", n, g, got[n-1].Event)
			}
		}
	}
}

func testRead(t *testing.T, s store.Store) {
	k := key("t")
	if got := read(t, s, key("empty"), 0, 10); len(got) != 0 {
		t.Errorf("Read of an empty journal = %v, want none", got)
	}
	appendEntries(t, s, k, entries("run-1", 1, 5)...)
	tests := []struct {
		after int64
		limit int
		want  []int64
	}{
		{after: 0, limit: 10, want: []int64{1, 2, 3, 4, 5}},
		{after: 0, limit: 2, want: []int64{1, 2}},
		{after: 2, limit: 2, want: []int64{3, 4}},
		{after: 4, limit: 10, want: []int64{5}},
		{after: 5, limit: 10, want: []int64{}},
		{after: 9, limit: 10, want: []int64{}},
		// limit <= 0 reads to the end, as MemoryStore does.
		{after: 0, limit: 0, want: []int64{1, 2, 3, 4, 5}},
		{after: 3, limit: 0, want: []int64{4, 5}},
	}
	for _, tc := range tests {
		got := read(t, s, k, tc.after, tc.limit)
		if diff := cmp.Diff(tc.want, seqs(got)); diff != "" {
			t.Errorf("Read(after %d, limit %d) seqs (-want +got):\n%s", tc.after, tc.limit, diff)
		}
		for _, e := range got {
			if want := event(int(e.Seq)); string(e.Event) != string(want) {
				t.Errorf("Read(after %d, limit %d): seq %d has event %q, want %q", tc.after, tc.limit, e.Seq, e.Event, want)
			}
		}
	}
}

func testLastSeq(t *testing.T, s store.Store) {
	k := key("t")
	if n := lastSeq(t, s, k); n != 0 {
		t.Errorf("LastSeq of an empty journal = %d, want 0", n)
	}
	appendEntries(t, s, k, entries("run-1", 1, 3)...)
	if n := lastSeq(t, s, k); n != 3 {
		t.Errorf("LastSeq = %d, want 3", n)
	}
	appendEntries(t, s, k, entries("run-1", 4, 4)...)
	if n := lastSeq(t, s, k); n != 4 {
		t.Errorf("LastSeq = %d, want 4", n)
	}
}

func testTrimJournal(t *testing.T, s store.Store) {
	ctx := context.Background()
	k, other := key("t"), key("other")
	if err := s.TrimJournal(ctx, k, 5); err != nil {
		t.Fatalf("TrimJournal of a missing journal: %v", err)
	}
	appendEntries(t, s, k, entries("run-1", 1, 6)...)
	appendEntries(t, s, other, entries("run-1", 1, 6)...)
	if err := s.TrimJournal(ctx, k, 4); err != nil {
		t.Fatalf("TrimJournal: %v", err)
	}
	if got := seqs(read(t, s, k, 0, 0)); !slices.Equal(got, []int64{5, 6}) {
		t.Errorf("after trimming to 4, Read = %v, want [5 6]", got)
	}
	if got := seqs(read(t, s, other, 0, 0)); len(got) != 6 {
		t.Errorf("another thread's journal was trimmed: %v", got)
	}
	// The last entry always stays, and the numbering goes on from it.
	if err := s.TrimJournal(ctx, k, 100); err != nil {
		t.Fatalf("TrimJournal past the end: %v", err)
	}
	if got := seqs(read(t, s, k, 0, 0)); !slices.Equal(got, []int64{6}) {
		t.Errorf("after trimming past the end, Read = %v, want [6]", got)
	}
	if n := lastSeq(t, s, k); n != 6 {
		t.Errorf("LastSeq after trimming = %d, want 6", n)
	}
	if err := s.Append(ctx, k, entries("run-2", 6, 6)...); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Append reusing a number after trimming = %v, want ErrConflict", err)
	}
	appendEntries(t, s, k, entries("run-2", 7, 8)...)
	if got := seqs(read(t, s, k, 0, 0)); !slices.Equal(got, []int64{6, 7, 8}) {
		t.Errorf("after appending, Read = %v, want [6 7 8]", got)
	}
}

func testWaitReady(t *testing.T, s store.Store) {
	k := key("t")
	appendEntries(t, s, k, entries("run-1", 1, 2)...)
	// A deadline instead of a sleep: Wait must not block at all here, so
	// reaching the deadline means it blocked.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, after := range []int64{0, 1} {
		if err := s.Wait(ctx, k, after); err != nil {
			t.Errorf("Wait(after %d) with entries up to 2: %v, want nil at once", after, err)
		}
	}
}

// testWaitWakes tails a journal as RunReader.Events does: a reader alternates
// Wait and Read while the test appends one entry at a time, each only
// after the reader has seen the previous one, so most Waits start on a
// journal with nothing new and must be woken by the Append.
func testWaitWakes(t *testing.T, s store.Store) {
	const rounds = 50
	k := key("t")
	// The deadline only turns a Wait that is never woken into a failure
	// instead of a hang; nothing waits for it to pass.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	seen := make(chan int64)
	failed := make(chan error, 1)
	wg.Go(func() {
		after := int64(0)
		for after < rounds {
			if err := s.Wait(ctx, k, after); err != nil {
				failed <- fmt.Errorf("Wait(after %d): %w", after, err)
				return
			}
			es, err := s.Read(ctx, k, after, 10)
			if err != nil {
				failed <- fmt.Errorf("Read(after %d): %w", after, err)
				return
			}
			if len(es) == 0 {
				failed <- fmt.Errorf("Wait(after %d) returned nil with no entry after %d", after, after)
				return
			}
			after = es[len(es)-1].Seq
			select {
			case seen <- after:
			case <-ctx.Done():
				return
			}
		}
	})

	for n := 1; n <= rounds; n++ {
		select {
		case err := <-failed:
			t.Fatalf("reader, before append %d: %v", n, err)
		default:
		}
		appendEntries(t, s, k, entries("run-1", n, n)...)
		select {
		case got := <-seen:
			if got != int64(n) {
				t.Fatalf("reader saw up to seq %d after append %d", got, n)
			}
		case err := <-failed:
			t.Fatalf("reader, after append %d: %v", n, err)
		}
	}
}

func testWaitCancel(t *testing.T, s store.Store) {
	k := key("t")
	appendEntries(t, s, k, entries("run-1", 1, 1)...)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Wait(ctx, k, 1) }()
	// An Append to another thread of the same agent, and to the same
	// thread id under another agent, must not wake this Wait.
	appendEntries(t, s, key("other"), entries("run-1", 1, 1)...)
	appendEntries(t, s, store.ThreadKey{Agent: "other-agent", ThreadID: "t"}, entries("run-1", 1, 1)...)
	select {
	case err := <-done:
		t.Fatalf("Wait returned %v before its context ended, with no new entry", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after cancel: error = %v, want context.Canceled", err)
	}

	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	if err := s.Wait(expired, k, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait with an expired deadline: error = %v, want context.DeadlineExceeded", err)
	}
}

// testIndependentKeys uses keys that collide under naive encodings: the
// same thread id under two agents or two principals (the empty one among
// them), two keys with the same String(), and principals and thread ids
// that shift a separator from one to the other.
func testIndependentKeys(t *testing.T, s store.Store) {
	keys := []store.ThreadKey{
		{Agent: "a", ThreadID: "t"},
		{Agent: "b", ThreadID: "t"},
		{Agent: "a", ThreadID: "b/c"},
		{Agent: "a/b", ThreadID: "c"},
		{Agent: "a", ThreadID: "t\x00x"},
		{Agent: "a", ThreadID: "t/"},
		{Agent: "a", Principal: "alice", ThreadID: "t"},
		{Agent: "a", Principal: "bob", ThreadID: "t"},
		{Agent: "a", Principal: "alice\x00", ThreadID: "t"},
		{Agent: "a", Principal: "alice", ThreadID: "\x00t"},
		{Agent: "a", Principal: "\x00alice", ThreadID: "t"},
		{Agent: "a", ThreadID: "alice\x00t"},
	}
	for i, k := range keys {
		th := sample(k)
		th.Routed = fmt.Sprint("task-", i)
		for range i { // give each thread its own version
			th.Version = put(t, s, th)
		}
		appendEntries(t, s, k, entries(fmt.Sprint("run-", i), 1, i+1)...)
	}
	for i, k := range keys {
		if i == 0 {
			if _, err := s.GetThread(t.Context(), k); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("GetThread(%q) = %v, want ErrNotFound", k, err)
			}
		} else if got := get(t, s, k); got.Key != k || got.Routed != fmt.Sprint("task-", i) || got.Version != int64(i) {
			t.Errorf("GetThread(%q) = key %q, task %q, version %d; want key %q, task-%d, version %d",
				k, got.Key, got.Routed, got.Version, k, i, i)
		}
		if n := lastSeq(t, s, k); n != int64(i+1) {
			t.Errorf("LastSeq(%q) = %d, want %d", k, n, i+1)
		}
		for _, e := range read(t, s, k, 0, 100) {
			if e.RunID != fmt.Sprint("run-", i) {
				t.Errorf("Read(%q) has seq %d of %s, want only run-%d", k, e.Seq, e.RunID, i)
			}
		}
	}
}

// testInterruptIndex: an interrupt is found among its thread's
// principal's only; the same id raised on two principals' threads is two
// entries.
func testInterruptIndex(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.InterruptThread(ctx, "", "int-missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown interrupt: %v, want ErrNotFound", err)
	}
	a, b := store.ThreadKey{Agent: "a", ThreadID: "b/c"}, store.ThreadKey{Agent: "a/b", ThreadID: "c"}
	alice := store.ThreadKey{Agent: "a", Principal: "alice", ThreadID: "t\x00"}
	bob := store.ThreadKey{Agent: "a", Principal: "bob", ThreadID: "t"}
	for _, ix := range []struct {
		id  string
		key store.ThreadKey
	}{{"int-a", a}, {"int-b", b}, {"int-alice", alice}, {"int-same", alice}, {"int-same", bob}} {
		if err := s.IndexInterrupt(ctx, ix.id, ix.key); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		principal, id string
		want          store.ThreadKey // zero: not found
	}{
		{"", "int-a", a},
		{"", "int-b", b},
		{"alice", "int-alice", alice},
		{"alice", "int-same", alice},
		{"bob", "int-same", bob},
		{"", "int-alice", store.ThreadKey{}},
		{"bob", "int-alice", store.ThreadKey{}},
		{"alice", "int-a", store.ThreadKey{}},
		{"", "int-same", store.ThreadKey{}},
	} {
		got, err := s.InterruptThread(ctx, tc.principal, tc.id)
		if tc.want == (store.ThreadKey{}) {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("InterruptThread(%q, %s) = %v, %v; want ErrNotFound", tc.principal, tc.id, got, err)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("InterruptThread(%q, %s) = %#v, %v; want %#v", tc.principal, tc.id, got, err, tc.want)
		}
	}
}

// testPutAndAppend: the thread and the entries are written together, or
// neither.
func testPutAndAppend(t *testing.T, s store.Store) {
	k := key("t")
	th := sample(k)
	v := put(t, s, th)
	appendEntries(t, s, k, entries("run-1", 1, 2)...)
	th.Version = v
	th.Active = nil
	// A numbering that does not continue the journal fails the whole write.
	if _, err := s.PutThreadAndAppend(t.Context(), th, store.Entry{Seq: 2, RunID: "run-1", Event: event(3), Terminal: true}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("PutThreadAndAppend reusing seq 2: %v, want ErrConflict", err)
	}
	if got := get(t, s, k); got.Version != v {
		t.Fatalf("the thread was written by a refused PutThreadAndAppend: version %d", got.Version)
	}
	v2, err := s.PutThreadAndAppend(t.Context(), th, store.Entry{Seq: 3, RunID: "run-1", Event: event(3), Terminal: true})
	if err != nil {
		t.Fatal(err)
	}
	if v2 != v+1 {
		t.Errorf("version %d, want %d", v2, v+1)
	}
	if got := get(t, s, k); got.Active != nil || got.Version != v2 {
		t.Errorf("thread after PutThreadAndAppend: active %+v version %d", got.Active, got.Version)
	}
	es := read(t, s, k, 0, 10)
	if diff := cmp.Diff([]int64{1, 2, 3}, seqs(es)); diff != "" || !es[2].Terminal {
		t.Errorf("journal seqs (-want +got):\n%s; last %+v", diff, es[len(es)-1])
	}
}

// testPutAndAppendStale: on a version conflict nothing is written, neither
// the thread nor the entries.
func testPutAndAppendStale(t *testing.T, s store.Store) {
	k := key("t")
	th := sample(k)
	put(t, s, th) // version 1; th.Version is still 0
	th.Active.RunID = "other"
	if _, err := s.PutThreadAndAppend(t.Context(), th, entries("run-1", 1, 3)...); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale PutThreadAndAppend error = %v, want ErrConflict", err)
	}
	if got := get(t, s, k); got.Active == nil || got.Active.RunID != "run-1" {
		t.Errorf("the thread was written: active %+v", got.Active)
	}
	if n := lastSeq(t, s, k); n != 0 {
		t.Errorf("entries were written: last seq %d", n)
	}
}

// testActiveThreads lists exactly the threads with an active run.
func testActiveThreads(t *testing.T, s store.Store) {
	active := sample(key("active"))
	put(t, s, active)
	idle := sample(key("idle"))
	idle.Active = nil
	put(t, s, idle)
	other := sample(store.ThreadKey{Agent: "other-agent", ThreadID: "x\x00y"})
	put(t, s, other)
	// The same thread id of two principals: two active threads, each
	// listed with its principal (the adoption scan finds a run by it).
	alice := sample(store.ThreadKey{Agent: "agent", Principal: "alice", ThreadID: "active"})
	put(t, s, alice)
	bob := sample(store.ThreadKey{Agent: "agent", Principal: "bob\x00", ThreadID: "active"})
	put(t, s, bob)
	got, err := s.ActiveThreads(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ThreadKey{active.Key, other.Key, alice.Key, bob.Key}
	less := func(a, b store.ThreadKey) bool {
		return a.String()+"\x00"+a.Principal < b.String()+"\x00"+b.Principal
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("ActiveThreads (-want +got):\n%s", diff)
	}
}

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func testClose(t *testing.T, s store.Store) {
	appendEntries(t, s, key("t"), entries("run-1", 1, 1)...)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// WaitBlocks proves, inside a synctest bubble, what storetest can only
// make likely without fake time: Wait on a journal with nothing new stays
// blocked until an Append from another goroutine. It suits backends that
// notify in process; a network backend's reads never count as durably
// blocked, so synctest.Wait would not return for it.
func WaitBlocks(t *testing.T, s store.Store) {
	t.Helper()
	defer s.Close()
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
	if err := s.Append(t.Context(), k, store.Entry{Seq: 1, RunID: "run-1", Event: []byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait(t.Context(), k, 1) }()
	synctest.Wait()
	select {
	case err := <-done:
		t.Fatalf("Wait(after 1) returned %v with no entry after 1", err)
	default:
	}
	if err := s.Append(t.Context(), k, store.Entry{Seq: 2, RunID: "run-1", Event: []byte(`{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait after Append: %v", err)
		}
	default:
		t.Fatal("Wait still blocked after an Append")
	}
}

// BenchEvent is a typical streamed AG-UI event: 200 bytes of JSON.
var BenchEvent = func() []byte {
	ev := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-0123456789","delta":"`)
	ev = append(ev, bytes.Repeat([]byte("a"), 200-len(ev)-2)...)
	return append(ev, `"}`...)
}()

// BenchmarkAppend appends one BenchEvent entry per iteration.
func BenchmarkAppend(b *testing.B, s store.Store) {
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
	e := store.Entry{RunID: "run-1", Event: BenchEvent}
	b.SetBytes(int64(len(BenchEvent)))
	b.ReportAllocs()
	for b.Loop() {
		e.Seq++
		if err := s.Append(b.Context(), k, e); err != nil {
			b.Fatal(err)
		}
	}
}
