package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/auth"
)

// TestUnownedRecordsStayReadable: a thread record written before threads
// had owners (no "principal" field) reads back with no owner, is served to
// unauthenticated callers as before, and is not alice's: her read is
// answered as for an id nobody used, and her run on that id starts a thread
// of her own, leaving the old one as it was.
func TestUnownedRecordsStayReadable(t *testing.T) {
	t.Parallel()
	var th Thread
	if err := json.Unmarshal([]byte(`{"contextId":"ctx-1","taskId":"task-1","taskState":"completed","version":2}`), &th); err != nil {
		t.Fatal(err)
	}
	if th.Principal != "" {
		t.Fatalf("principal %q from a record without one", th.Principal)
	}
	agent := &scriptedAgent{streaming: true, turns: askTurns()[1:]}
	svc, store := newTestService(t, agent, nil)
	th.Key, th.Version = ThreadKey{Agent: "a", ThreadID: "old"}, 0
	if _, err := store.PutThread(t.Context(), &th); err != nil {
		t.Fatal(err)
	}
	before, err := svc.Thread(t.Context(), "a", "old")
	if err != nil {
		t.Fatalf("anonymous read: %v", err)
	}
	alice := auth.WithPrincipal(t.Context(), "alice")
	_, err = svc.Thread(alice, "a", "old")
	_, unused := svc.Thread(alice, "a", "never-used")
	var e, u *Error
	if !errors.As(err, &e) || !errors.As(unused, &u) || e.HTTPStatus() != http.StatusNotFound || e.Code != "unknown_thread" ||
		e.Message != strings.Replace(u.Message, "never-used", "old", 1) {
		t.Fatalf("alice's read: %v; want the 404 of an unused id (%v)", err, unused)
	}
	run, err := svc.StartRun(alice, "a", input("old", "r1"))
	if err != nil {
		t.Fatalf("alice's run: %v; want a thread of her own", err)
	}
	if events := collect(t, run); events[len(events)-1].Type() != agui.EventRunFinished {
		t.Fatalf("alice's run ended with %s", events[len(events)-1].Type())
	}
	if v, err := svc.Thread(alice, "a", "old"); err != nil || v.ContextID != "ctx-1" || len(v.Messages) != 2 {
		t.Errorf("alice's thread: %+v, %v; want her conversation", v, err)
	}
	if after, err := svc.Thread(t.Context(), "a", "old"); err != nil || !cmp.Equal(before, after) {
		t.Errorf("the unowned thread changed: %+v, %v", after, err)
	}
}

// TestThreadsPerPrincipal: the same thread id used by two principals names
// two threads: both runs start, and each principal's snapshot and journal
// hold its own run only.
func TestThreadsPerPrincipal(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, turns: askTurns()}
	svc, _ := newTestService(t, agent, nil)
	alice, bob := auth.WithPrincipal(t.Context(), "alice"), auth.WithPrincipal(t.Context(), "bob")
	in := input("th", "run-alice")
	in.ProtocolVersion = "1.0"
	run, err := svc.StartRun(alice, "a", in)
	if err != nil {
		t.Fatal(err)
	}
	collect(t, run) // asks which city: an interrupt
	in = input("th", "run-bob")
	in.Messages[0].Content = agui.TextContent("bob here")
	run, err = svc.StartRun(bob, "a", in)
	if err != nil {
		t.Fatalf("bob's run on the id alice uses: %v; want a thread of his own", err)
	}
	if events := collect(t, run); events[len(events)-1].Type() != agui.EventRunFinished {
		t.Fatalf("bob's run ended with %s", events[len(events)-1].Type())
	}
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		runID     string
		user      string
		interrupt int
	}{{"alice", alice, "run-alice", "hi", 1}, {"bob", bob, "run-bob", "bob here", 0}} {
		v, err := svc.Thread(tc.ctx, "a", "th")
		if err != nil {
			t.Fatalf("%s's snapshot: %v", tc.name, err)
		}
		if len(v.PendingInterrupts) != tc.interrupt || len(v.Messages) != 2 || v.Messages[0].Content.Text != tc.user {
			t.Errorf("%s's snapshot: %d interrupts, messages %+v; want %d and %q first", tc.name, len(v.PendingInterrupts), v.Messages, tc.interrupt, tc.user)
		}
		poll, err := svc.Poll(tc.ctx, "a", "th", 0, 0, 0)
		if err != nil || len(poll.Events) == 0 {
			t.Fatalf("%s's journal: %+v, %v", tc.name, poll, err)
		}
		for _, env := range poll.Events {
			if env.RunID != tc.runID {
				t.Errorf("%s's journal holds seq %d of %s", tc.name, env.Seq, env.RunID)
			}
		}
	}
	// Without a principal, the id is unused still.
	if _, err := svc.Thread(t.Context(), "a", "th"); err == nil {
		t.Error("an unauthenticated caller sees a principal's thread")
	}
}

// rejectionOf runs in as ctx's principal and returns the RUN_ERROR of the
// rejected resume.
func rejectionOf(t *testing.T, ctx context.Context, svc *Service, in *agui.RunAgentInput) *agui.RunError {
	t.Helper()
	run, err := svc.StartRun(ctx, "a", in)
	if err != nil {
		t.Fatalf("resume on %s: %v; want RUN_STARTED + RUN_ERROR", in.ThreadID, err)
	}
	events := collect(t, run)
	if len(events) != 2 || events[0].Type() != agui.EventRunStarted {
		t.Fatalf("want RUN_STARTED + RUN_ERROR, got %d events", len(events))
	}
	return lastError(t, events)
}

// TestResumeOfAnotherPrincipalsInterrupt: bob resuming an interrupt that
// is pending on alice's thread — on a thread of his, or on the id of
// alice's — is answered exactly as for an interrupt id nobody raised:
// nothing says the id exists elsewhere. Alice resuming it on another of
// her own threads is still told it belongs to another thread.
func TestResumeOfAnotherPrincipalsInterrupt(t *testing.T) {
	t.Parallel()
	agent := &scriptedAgent{streaming: true, turns: askTurns()}
	svc, _ := newTestService(t, agent, nil)
	alice, bob := auth.WithPrincipal(t.Context(), "alice"), auth.WithPrincipal(t.Context(), "bob")
	in := input("th-a", "r1")
	in.ProtocolVersion = "1.0"
	run, err := svc.StartRun(alice, "a", in)
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, run)
	fin, ok := events[len(events)-1].(*agui.RunFinished)
	if !ok || fin.Outcome == nil || len(fin.Outcome.Interrupts) != 1 {
		t.Fatalf("want alice's run to end with an interrupt, got %#v", events[len(events)-1])
	}
	id := fin.Outcome.Interrupts[0].ID
	// Bob's own thread, with nothing pending.
	if run, err = svc.StartRun(bob, "a", input("th-b", "r1")); err != nil {
		t.Fatal(err)
	}
	collect(t, run)

	const madeUp = "int-made-up"
	for _, thread := range []string{"th-b", "th-a"} {
		got := rejectionOf(t, bob, svc, resumeInput(thread, "r2", resolved(id, `{"city":"Paris"}`)))
		want := rejectionOf(t, bob, svc, resumeInput(thread, "r2", resolved(madeUp, `{"city":"Paris"}`)))
		if got.Code != want.Code || got.Message != strings.Replace(want.Message, madeUp, id, 1) {
			t.Errorf("bob resuming alice's interrupt on %s: %s %q; want as for a made-up id: %s %q",
				thread, got.Code, got.Message, want.Code, want.Message)
		}
		if got.Code != agui.CodeResumeUnknownInterrupt {
			t.Errorf("bob resuming alice's interrupt on %s: %s, want %s", thread, got.Code, agui.CodeResumeUnknownInterrupt)
		}
	}
	if v, err := svc.Thread(alice, "a", "th-a"); err != nil || len(v.PendingInterrupts) != 1 {
		t.Errorf("alice's thread after bob's resumes: %+v, %v; want her interrupt pending", v, err)
	}
	// Alice's own other thread: the hint names nothing she cannot read.
	if run, err = svc.StartRun(alice, "a", input("th-a2", "r1")); err != nil {
		t.Fatal(err)
	}
	collect(t, run)
	if e := rejectionOf(t, alice, svc, resumeInput("th-a2", "r2", resolved(id, `{"city":"Paris"}`))); e.Code != agui.CodeResumeWrongThread {
		t.Errorf("alice resuming her interrupt on her other thread: %s %q; want %s", e.Code, e.Message, agui.CodeResumeWrongThread)
	}
}
