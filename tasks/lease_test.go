package tasks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/store/boltstore"
)

// testLease is short so that the tests see leases lapse; renewal runs every
// testLease/3.
const testLease = 300 * time.Millisecond

// newInstance is one bridge instance on a store it shares with others.
func newInstance(t *testing.T, store Store, name string, agent Agent) *Service {
	t.Helper()
	spec := AgentSpec{Name: "a", Connect: func(context.Context) (Agent, error) { return agent, nil },
		PollInitial: time.Millisecond, PollMax: 5 * time.Millisecond, RequestTimeout: time.Second}
	svc := NewService(Options{Store: store, Agents: []AgentSpec{spec}, FirstEventWait: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil)).With("instance", name), CancelGrace: 100 * time.Millisecond,
		Lease: testLease, Instance: name})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = svc.Close(ctx)
	})
	return svc
}

// leaseStores are the stores the lease tests run on: every backend
// takes lease changes through its optimistic versioning alike. (Redis
// runs them with real processes: package server's scale-out tests.)
func leaseStores(t *testing.T) map[string]Store {
	t.Helper()
	bolt, err := boltstore.OpenBoltStore(filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	return map[string]Store{"memory": store.NewMemoryStore(), "bolt": bolt}
}

// kill stops an instance the way a crash would look to the others: its
// run stays active on the thread and its lease is no longer renewed.
func kill(svc *Service) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_ = svc.Close(ctx)
}

// TestLeaseKeepsThreadBusyAcrossInstances: a run's lease is renewed while
// it lives, so another instance refuses a second run on the thread with
// thread_busy for longer than one lease, and does not adopt it.
func TestLeaseKeepsThreadBusyAcrossInstances(t *testing.T) {
	t.Parallel()
	for name, store := range leaseStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			leaseKeepsThreadBusy(t, store)
		})
	}
}

func leaseKeepsThreadBusy(t *testing.T, store Store) {
	agent := &scriptedAgent{streaming: true, hold: true, release: make(chan struct{}), stream: []scripted{
		{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Hello ", false)},
	}, after: []scripted{{ev: chunk("world.", true)}, {ev: status(a2a.TaskStateCompleted)}}}
	a := newInstance(t, store, "A", agent)
	b := newInstance(t, store, "B", agent)
	run := must(a.StartRun(t.Context(), "a", input("th", "r1")))
	first, err := store.GetThread(t.Context(), run.Key)
	if err != nil || first.Active == nil || first.Active.Owner != "A" || first.Active.LeaseExpires.IsZero() {
		t.Fatalf("claimed thread: %+v, %v", first, err)
	}
	deadline := time.Now().Add(3 * testLease)
	for time.Now().Before(deadline) {
		_, err := b.StartRun(t.Context(), "a", input("th", "r2"))
		var e *Error
		if !errors.As(err, &e) || e.Code != "thread_busy" || e.HTTPStatus() != 409 {
			t.Fatalf("second run on B: %v, want thread_busy 409", err)
		}
		time.Sleep(testLease / 5)
	}
	th, err := store.GetThread(t.Context(), run.Key)
	if err != nil || th.Active == nil || th.Active.Owner != "A" || !th.Active.LeaseExpires.After(first.Active.LeaseExpires) {
		t.Fatalf("after 3 leases the run is A's with a renewed lease: %+v (first expiry %v), %v", th.Active, first.Active.LeaseExpires, err)
	}
	close(agent.release)
	events := collect(t, run)
	if got := text(events); got != "Hello world." {
		t.Fatalf("text %q", got)
	}
	if th, _ := store.GetThread(t.Context(), run.Key); th.Active != nil {
		t.Fatalf("released thread keeps its lease: %+v", th)
	}
}

// TestLapsedLeaseIsAdopted: an instance dies mid-run; once its lease lapses
// another instance's scan adopts the run, reattaches to the task and
// finishes the journal: one valid run, every chunk once, though two
// instances scan for it.
func TestLapsedLeaseIsAdopted(t *testing.T) {
	t.Parallel()
	for _, v1 := range []bool{true, false} {
		for name, store := range leaseStores(t) {
			t.Run(fmt.Sprintf("%s/v1=%v", name, v1), func(t *testing.T) {
				t.Parallel()
				lapsedLeaseIsAdopted(t, store, v1)
			})
		}
	}
}

func lapsedLeaseIsAdopted(t *testing.T, store Store, v1 bool) {
	first := &scriptedAgent{streaming: true, hold: true, stream: []scripted{
		{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Hello ", false)},
	}}
	a := newInstance(t, store, "A", first)
	in := input("th", "r1")
	if v1 {
		in.ProtocolVersion = "1.0"
	}
	run := must(a.StartRun(t.Context(), "a", in))
	waitFor(t, func() bool {
		es, _ := store.Read(t.Context(), run.Key, 0, 100)
		return strings.Contains(string(joined(es)), "Hello ")
	})
	kill(a)
	// A crash leaves the lease as it was (a shutdown ends it): put it back.
	th, err := store.GetThread(t.Context(), run.Key)
	if err != nil {
		t.Fatal(err)
	}
	th.Active.LeaseExpires = time.Now().Add(testLease)
	if _, err := store.PutThread(t.Context(), th); err != nil {
		t.Fatal(err)
	}

	later := &scriptedAgent{streaming: true, subscribe: []scripted{
		{ev: task(a2a.TaskStateWorking, "Hello ")}, {ev: chunk("world.", true)}, {ev: status(a2a.TaskStateCompleted)},
	}}
	newInstance(t, store, "B", later)
	c := newInstance(t, store, "C", later)
	follow, err := c.Follow(t.Context(), "a", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, follow)
	if time.Now().Before(th.Active.LeaseExpires) {
		t.Fatal("the run was adopted before its lease lapsed")
	}
	if err := agui.CheckStream(v1, events); err != nil {
		t.Fatalf("the journal is not one valid run: %v", err)
	}
	if got := text(events); got != "Hello world." {
		t.Fatalf("text %q: adopted once, every chunk once", got)
	}
	if _, ok := events[len(events)-1].(*agui.RunFinished); !ok {
		t.Fatalf("the run ends with %s", events[len(events)-1].Type())
	}
	th, err = store.GetThread(t.Context(), run.Key)
	if err != nil || th.Active != nil || th.Own().TaskState != string(a2a.TaskStateCompleted) {
		t.Fatalf("thread after the adoption: %+v %v", th, err)
	}
}

// TestLostLeaseStopsTheRun: an instance that finds its run adopted by
// another (it could not renew in time) stops without touching the thread
// or the journal, and its readers are told to follow the journal.
func TestLostLeaseStopsTheRun(t *testing.T) {
	t.Parallel()
	store := store.NewMemoryStore()
	agent := &scriptedAgent{streaming: true, hold: true, stream: []scripted{
		{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Hello ", false)},
	}}
	a := newInstance(t, store, "A", agent)
	run := must(a.StartRun(t.Context(), "a", input("th", "r1")))
	waitFor(t, func() bool {
		es, _ := store.Read(t.Context(), run.Key, 0, 100)
		return strings.Contains(string(joined(es)), "Hello ")
	})
	// Another instance claims the run, as an adopter would.
	th, err := store.GetThread(t.Context(), run.Key)
	if err != nil {
		t.Fatal(err)
	}
	th.Active.Owner, th.Active.LeaseExpires = "B", time.Now().Add(time.Hour)
	if _, err := store.PutThread(t.Context(), th); err != nil {
		t.Fatal(err)
	}
	last, _ := store.LastSeq(t.Context(), run.Key)
	events := collect(t, run)
	if e := lastError(t, events); e.Code != agui.CodeServerShutdown || !strings.Contains(e.Message, "another instance") {
		t.Fatalf("the stream on A ends with %+v", e)
	}
	after, err := store.GetThread(t.Context(), run.Key)
	if err != nil || !after.Running("r1") || after.Active.Owner != "B" {
		t.Fatalf("A touched the adopted thread: %+v %v", after, err)
	}
	if now, _ := store.LastSeq(t.Context(), run.Key); now != last {
		t.Fatalf("A appended after losing the run: last seq %d, then %d", last, now)
	}
}

// TestCancelOnAnotherInstance: a cancel on B for A's run sends CancelTask
// once (from B), A notices the request at its next renewal and ends the run
// cancelled even though the agent's stream never says so, and a second
// cancel sends nothing more.
func TestCancelOnAnotherInstance(t *testing.T) {
	t.Parallel()
	store := store.NewMemoryStore()
	agent := &scriptedAgent{streaming: true, hold: true, stream: []scripted{
		{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Counting: 1", false)},
	}, tasks: []*a2a.Task{task(a2a.TaskStateCanceled, "")}}
	a := newInstance(t, store, "A", agent)
	b := newInstance(t, store, "B", agent)
	in := input("th", "r1")
	in.ProtocolVersion = "1.0"
	run := must(a.StartRun(t.Context(), "a", in))
	waitFor(t, func() bool {
		th, err := store.GetThread(t.Context(), run.Key)
		return err == nil && th.Active != nil && th.Active.Tasks[th.Key.Agent] == "task-1"
	})
	v, err := b.Cancel(t.Context(), "a", "th")
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Cancel; !c.Requested || c.Repeated || c.TaskState != string(a2a.TaskStateCanceled) {
		t.Fatalf("cancel on B: %+v", c)
	}
	again, err := b.Cancel(t.Context(), "a", "th")
	if err != nil || !again.Cancel.Repeated {
		t.Fatalf("second cancel: %+v %v", again, err)
	}
	wantCancelled(t, true, collect(t, run))
	agent.mu.Lock()
	n := len(agent.canceled)
	agent.mu.Unlock()
	if n != 1 {
		t.Fatalf("CancelTask sent %d times, want once", n)
	}
}

// TestShutdownHandsTheRunOver: an instance stopped gracefully ends its
// runs' leases at once, so another instance adopts them at its next scan
// instead of a lease later.
func TestShutdownHandsTheRunOver(t *testing.T) {
	t.Parallel()
	store := store.NewMemoryStore()
	agent := &scriptedAgent{streaming: true, hold: true, stream: []scripted{
		{ev: task(a2a.TaskStateWorking, "")}, {ev: chunk("Hello ", false)},
	}}
	a := newInstance(t, store, "A", agent)
	run := must(a.StartRun(t.Context(), "a", input("th", "r1")))
	waitFor(t, func() bool {
		es, _ := store.Read(t.Context(), run.Key, 0, 100)
		return strings.Contains(string(joined(es)), "Hello ")
	})
	kill(a)
	th, err := store.GetThread(t.Context(), run.Key)
	if err != nil || !th.Running("r1") || th.Active.Owner != "A" || th.Active.LeaseExpires.After(time.Now()) {
		t.Fatalf("after the shutdown the run stays, its lease ended: %+v %v", th, err)
	}
}
