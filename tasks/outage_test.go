package tasks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// outageStore is a memory store that is out while down is set: every
// call fails, as a Redis that restarts or a disk that fills would make
// them. (The real outages — a redis-server stopped and restarted, a full
// filesystem — are package server's TestStoreOutage* tests.)
type outageStore struct {
	*store.MemoryStore
	down atomic.Bool
}

var errStoreDown = errors.New("store out")

func (o *outageStore) out() error {
	if o.down.Load() {
		return errStoreDown
	}
	return nil
}

func (o *outageStore) GetThread(ctx context.Context, key ThreadKey) (*Thread, error) {
	if err := o.out(); err != nil {
		return nil, err
	}
	return o.MemoryStore.GetThread(ctx, key)
}

func (o *outageStore) PutThread(ctx context.Context, th *Thread) (int64, error) {
	if err := o.out(); err != nil {
		return 0, err
	}
	return o.MemoryStore.PutThread(ctx, th)
}

func (o *outageStore) PutThreadAndAppend(ctx context.Context, th *Thread, entries ...Entry) (int64, error) {
	if err := o.out(); err != nil {
		return 0, err
	}
	return o.MemoryStore.PutThreadAndAppend(ctx, th, entries...)
}

func (o *outageStore) Append(ctx context.Context, key ThreadKey, entries ...Entry) error {
	if err := o.out(); err != nil {
		return err
	}
	return o.MemoryStore.Append(ctx, key, entries...)
}

func (o *outageStore) LastSeq(ctx context.Context, key ThreadKey) (int64, error) {
	if err := o.out(); err != nil {
		return 0, err
	}
	return o.MemoryStore.LastSeq(ctx, key)
}

// countingAgent streams "1 " … "n " as artifact chunks, one every delay.
func countingAgent(n int, delay time.Duration) (*scriptedAgent, string) {
	a := &scriptedAgent{streaming: true, delay: delay, stream: []scripted{{ev: task(a2a.TaskStateWorking, "")}}}
	var want strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "%d ", i)
		a.stream = append(a.stream, scripted{ev: chunk(fmt.Sprintf("%d ", i), i > 1)})
	}
	a.stream = append(a.stream, scripted{ev: status(a2a.TaskStateCompleted)})
	return a, want.String()
}

// outageRun starts a run on svc and reads it to the end, taking the store
// out for outage once the client was shown its first text. It returns
// what the client was shown.
func outageRun(t *testing.T, svc *Service, st *outageStore, thread string, outage time.Duration) []agui.Envelope {
	t.Helper()
	run := must(svc.StartRun(t.Context(), "a", input(thread, "r1")))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var shown []agui.Envelope
	cut := false
	for env, err := range run.Events(ctx) {
		if err != nil {
			t.Fatalf("after %d events: %v", len(shown), err)
		}
		shown = append(shown, env)
		if !cut && bytes.Contains(env.Event, []byte(agui.EventTextMessageContent)) {
			cut = true
			st.down.Store(true)
			time.AfterFunc(outage, func() { st.down.Store(false) })
		}
	}
	if !cut {
		t.Fatal("the run showed no text before it ended")
	}
	return shown
}

// wantJournalShown checks that the thread's journal holds exactly what the
// client was shown, at the same numbers. With gapless the numbers are 1,
// 2, …; otherwise the run gave events up (never shown, never stored) and
// its end follows their numbers.
func wantJournalShown(t *testing.T, st Store, key ThreadKey, shown []agui.Envelope, gapless bool) {
	t.Helper()
	entries, err := st.Read(t.Context(), key, 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(shown) {
		t.Fatalf("the journal holds %d events, the client was shown %d", len(entries), len(shown))
	}
	for i, e := range entries {
		if (gapless && e.Seq != int64(i+1)) || (i > 0 && e.Seq <= entries[i-1].Seq) || shown[i].Seq != e.Seq || !bytes.Equal(shown[i].Event, e.Event) {
			t.Fatalf("event %d: journal %d %s, shown %d %s", i, e.Seq, e.Event, shown[i].Seq, shown[i].Event)
		}
	}
}

func decodeAll(t *testing.T, envs []agui.Envelope) []agui.Event {
	t.Helper()
	out := make([]agui.Event, len(envs))
	for i, env := range envs {
		e, err := agui.Decode(env.Event)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = e
	}
	return out
}

// TestStoreOutageWithinBudgetIsRiddenOut: a store out for 1.5 s — longer
// than the three retries (about a second) a run used to give it, shorter
// than StoreOutage — costs the run nothing: it finishes with every chunk
// once, and the journal holds exactly what the client was shown.
func TestStoreOutageWithinBudgetIsRiddenOut(t *testing.T) {
	t.Parallel()
	st := &outageStore{MemoryStore: store.NewMemoryStore()}
	agent, want := countingAgent(40, 10*time.Millisecond)
	svc := NewService(Options{Store: st, StoreOutage: 10 * time.Second, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
	defer svc.Close(t.Context())
	shown := outageRun(t, svc, st, "th", 1500*time.Millisecond)
	events := decodeAll(t, shown)
	if err := agui.CheckStream(false, events); err != nil {
		t.Fatalf("not one valid run: %v", err)
	}
	if _, ok := events[len(events)-1].(*agui.RunFinished); !ok || text(events) != want {
		t.Fatalf("the run ends with %s, text %q; want RUN_FINISHED, %q", events[len(events)-1].Type(), text(events), want)
	}
	wantJournalShown(t, st, ThreadKey{Agent: "a", ThreadID: "th"}, shown, true)
}

// TestStoreOutagePastBudgetEndsTheRun: a store out for longer than
// StoreOutage ends the run with RUN_ERROR store_unavailable, shown at once
// from memory; once the store is back the run's end is journaled with the
// thread's release, so the journal holds exactly what the client was
// shown, and the thread takes a new run without a restart.
func TestStoreOutagePastBudgetEndsTheRun(t *testing.T) {
	t.Parallel()
	st := &outageStore{MemoryStore: store.NewMemoryStore()}
	agent, _ := countingAgent(40, 10*time.Millisecond)
	svc := NewService(Options{Store: st, StoreOutage: 300 * time.Millisecond, Agents: []AgentSpec{{Name: "a",
		Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
	defer svc.Close(t.Context())
	shown := outageRun(t, svc, st, "th", 2*time.Second)
	events := decodeAll(t, shown)
	if e := lastError(t, events); e.Code != agui.CodeStoreUnavailable {
		t.Fatalf("the run ends with code %q, want store_unavailable", e.Code)
	}
	key := ThreadKey{Agent: "a", ThreadID: "th"}
	waitFor(t, func() bool {
		th, err := st.GetThread(t.Context(), key)
		return err == nil && th.Active == nil
	})
	wantJournalShown(t, st, key, shown, false)
	in := input("th", "r2")
	in.Messages = append(in.Messages, agui.Message{ID: "u2", Role: agui.RoleUser, Content: agui.TextContent("again")})
	next := collect(t, must(svc.StartRun(t.Context(), "a", in)))
	if _, ok := next[len(next)-1].(*agui.RunFinished); !ok {
		t.Fatalf("the next run on the thread ends with %s", next[len(next)-1].Type())
	}
}
