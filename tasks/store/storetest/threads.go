package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// conversation is an idle thread of principal with n user messages.
func conversation(k store.ThreadKey, n int) *store.Thread {
	th := &store.Thread{Key: k, Principal: k.Principal}
	for i := range n {
		th.Messages = append(th.Messages, agui.Message{ID: fmt.Sprint("m", i), Role: agui.RoleUser,
			Content: agui.TextContent(fmt.Sprintf("  question %d of %s  ", i, k.ThreadID))})
	}
	return th
}

func list(t *testing.T, s store.Store, q store.ListQuery) store.ThreadPage {
	t.Helper()
	page, err := s.ListThreads(t.Context(), q)
	if err != nil {
		t.Fatalf("ListThreads(%+v): %v", q, err)
	}
	return page
}

func ids(ss []store.ThreadSummary) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Agent+"/"+s.ThreadID)
	}
	return out
}

// testListThreads: a principal's threads, newest activity first, with
// their summaries; nothing of another principal; the agent filter.
func testListThreads(t *testing.T, s store.Store) {
	alice := func(agent, id string) store.ThreadKey {
		return store.ThreadKey{Agent: agent, Principal: "alice", ThreadID: id}
	}
	put(t, s, conversation(alice("a", "one"), 1))
	put(t, s, conversation(store.ThreadKey{Agent: "a", Principal: "bob", ThreadID: "bobs"}, 1))
	busy := conversation(alice("b", "two"), 2)
	busy.Active = &store.ActiveRun{RunID: "r"}
	v2 := put(t, s, busy)
	asked := conversation(alice("a", "three\x00"), 3)
	asked.Interrupts = sample(asked.Key).Interrupts
	put(t, s, asked)
	// Touching the first thread makes it the newest; its creation time
	// stays.
	first := get(t, s, alice("a", "one"))
	first.Messages = append(first.Messages, agui.Message{ID: "x", Role: agui.RoleAssistant, Content: agui.TextContent("answer")})
	put(t, s, first)

	page := list(t, s, store.ListQuery{Principal: "alice", Limit: 10})
	if diff := cmp.Diff([]string{"a/one", "a/three\x00", "b/two"}, ids(page.Threads)); diff != "" || page.Next != "" {
		t.Fatalf("ListThreads(alice) (-want +got):\n%s next %q", diff, page.Next)
	}
	one, three, two := page.Threads[0], page.Threads[1], page.Threads[2]
	if one.Title != "question 0 of one" || one.MessageCount != 2 || one.Active || one.Version != 2 {
		t.Errorf("summary of a/one: %+v", one)
	}
	if !one.CreatedAt.Before(one.LastActivityAt) || !one.CreatedAt.Before(two.CreatedAt) {
		t.Errorf("a/one created %v, last active %v; b/two created %v: want creation kept, activity moved on",
			one.CreatedAt, one.LastActivityAt, two.CreatedAt)
	}
	if !two.Active || two.MessageCount != 2 || two.Version != v2 || three.Interrupts != 1 || three.Active {
		t.Errorf("summaries of b/two %+v and a/three %+v", two, three)
	}
	if k := (store.ThreadKey{Agent: "a", Principal: "alice", ThreadID: "three\x00"}); three.Key != k {
		t.Errorf("key of a/three: %#v", three.Key)
	}
	if page := list(t, s, store.ListQuery{Principal: "alice", Agents: []string{"b"}, Limit: 10}); len(page.Threads) != 1 || page.Threads[0].ThreadID != "two" {
		t.Errorf("ListThreads(alice, agent b) = %v", ids(page.Threads))
	}
	if page := list(t, s, store.ListQuery{Principal: "bob", Limit: 10}); len(page.Threads) != 1 || page.Threads[0].ThreadID != "bobs" {
		t.Errorf("ListThreads(bob) = %v", ids(page.Threads))
	}
	if page := list(t, s, store.ListQuery{Principal: "", Limit: 10}); len(page.Threads) != 0 {
		t.Errorf("ListThreads(no principal) = %v, want nothing", ids(page.Threads))
	}
	if _, err := s.ListThreads(t.Context(), store.ListQuery{Principal: "alice", Cursor: "not a cursor", Limit: 1}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("ListThreads with a bad cursor: %v, want ErrBadCursor", err)
	}
}

// testListThreadsPages: a cursor continues where its page ended, across
// pages, and a thread touched meanwhile is not listed twice after it.
func testListThreadsPages(t *testing.T, s store.Store) {
	var want []string
	for i := range 7 {
		k := store.ThreadKey{Agent: "agent", Principal: "p", ThreadID: fmt.Sprint("t", i)}
		put(t, s, conversation(k, 1))
		want = append([]string{"agent/" + k.ThreadID}, want...)
	}
	var got []string
	q := store.ListQuery{Principal: "p", Limit: 3}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more than 3 pages of 3 for 7 threads: %v", got)
		}
		page := list(t, s, q)
		got = append(got, ids(page.Threads)...)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("threads over pages (-want +got):\n%s", diff)
	}
}

func testCountThreads(t *testing.T, s store.Store) {
	for i := range 3 {
		put(t, s, conversation(store.ThreadKey{Agent: fmt.Sprint("a", i%2), Principal: "p", ThreadID: fmt.Sprint("t", i)}, 1))
	}
	put(t, s, conversation(store.ThreadKey{Agent: "a0", Principal: "q", ThreadID: "t"}, 1))
	for principal, want := range map[string]int{"p": 3, "q": 1, "": 0} {
		if n, err := s.CountThreads(t.Context(), principal); err != nil || n != want {
			t.Errorf("CountThreads(%q) = %d, %v; want %d", principal, n, err, want)
		}
	}
}

// testPurgeThread: everything of the thread goes, under the version check;
// the same thread id of another principal stays.
func testPurgeThread(t *testing.T, s store.Store) {
	ctx := t.Context()
	k := store.ThreadKey{Agent: "agent", Principal: "alice", ThreadID: "t"}
	other := store.ThreadKey{Agent: "agent", Principal: "bob", ThreadID: "t"}
	for _, key := range []store.ThreadKey{k, other} {
		put(t, s, sample(key))
		appendEntries(t, s, key, entries("run-1", 1, 3)...)
		for _, id := range []string{"int-1", "int-0"} {
			if err := s.IndexInterrupt(ctx, id, key); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.PurgeThread(ctx, k, 7); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("PurgeThread at a stale version: %v, want ErrConflict", err)
	}
	if got := get(t, s, k); got.Version != 1 {
		t.Fatalf("after a refused purge the thread is at version %d", got.Version)
	}
	if err := s.PurgeThread(ctx, k, 1); err != nil {
		t.Fatalf("PurgeThread: %v", err)
	}
	if _, err := s.GetThread(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetThread after the purge: %v, want ErrNotFound", err)
	}
	if es := read(t, s, k, 0, 10); len(es) != 0 || lastSeq(t, s, k) != 0 {
		t.Errorf("the journal after the purge: %d entries", len(es))
	}
	for _, id := range []string{"int-1", "int-0"} {
		if _, err := s.InterruptThread(ctx, "alice", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("InterruptThread(alice, %s) after the purge: %v, want ErrNotFound", id, err)
		}
		if got, err := s.InterruptThread(ctx, "bob", id); err != nil || got != other {
			t.Errorf("InterruptThread(bob, %s) = %v, %v: bob's thread lost its index", id, got, err)
		}
	}
	if page := list(t, s, store.ListQuery{Principal: "alice", Limit: 10}); len(page.Threads) != 0 {
		t.Errorf("ListThreads after the purge: %v", ids(page.Threads))
	}
	if n, _ := s.CountThreads(ctx, "alice"); n != 0 {
		t.Errorf("CountThreads after the purge: %d", n)
	}
	if active, _ := s.ActiveThreads(ctx); len(active) != 1 || active[0] != other {
		t.Errorf("ActiveThreads after the purge: %v, want bob's only", active)
	}
	if err := s.Wait(ctx, k, 3); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Wait after the purged journal's end: %v, want ErrNotFound", err)
	}
	if err := s.PurgeThread(ctx, k, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PurgeThread again: %v, want ErrNotFound", err)
	}
	if es := read(t, s, other, 0, 10); len(es) != 3 || get(t, s, other).Version != 1 {
		t.Errorf("bob's thread after alice's purge: %d entries", len(es))
	}
	// The same key starts afresh: version 0, a journal from 1.
	put(t, s, conversation(k, 1))
	appendEntries(t, s, k, entries("run-2", 1, 1)...)
	if err := s.PurgeThread(ctx, k, 0); err != nil {
		t.Errorf("PurgeThread at any version: %v", err)
	}
}

// testIdleThreads: threads without a run, last active before a time,
// oldest first, bounded.
func testIdleThreads(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, id := range []string{"old", "newer"} {
		put(t, s, conversation(store.ThreadKey{Agent: "agent", Principal: "p" + id, ThreadID: id}, 1))
	}
	busy := conversation(key("busy"), 1)
	busy.Active = &store.ActiveRun{RunID: "r"}
	put(t, s, busy)
	later := time.Now().Add(time.Hour)
	got, err := s.IdleThreads(ctx, later, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"agent/old", "agent/newer"}, ids(got)); diff != "" {
		t.Fatalf("IdleThreads (-want +got):\n%s", diff)
	}
	if got[0].Key.Principal != "pold" || got[0].Version != 1 {
		t.Errorf("IdleThreads' first: %+v", got[0])
	}
	if got, _ := s.IdleThreads(ctx, later, 1); len(got) != 1 || got[0].ThreadID != "old" {
		t.Errorf("IdleThreads(limit 1) = %v", ids(got))
	}
	if got, _ := s.IdleThreads(ctx, time.Now().Add(-time.Hour), 10); len(got) != 0 {
		t.Errorf("IdleThreads before an hour ago = %v, want none", ids(got))
	}
	// A run starting takes the thread out; its end puts it back.
	th := get(t, s, busy.Key)
	th.Active = nil
	put(t, s, th)
	old := get(t, s, got0Key())
	old.Active = &store.ActiveRun{RunID: "r2"}
	put(t, s, old)
	if got, _ := s.IdleThreads(ctx, later, 10); cmp.Diff([]string{"agent/newer", "agent/busy"}, ids(got)) != "" {
		t.Errorf("IdleThreads after a run started and one ended = %v", ids(got))
	}
}

func got0Key() store.ThreadKey {
	return store.ThreadKey{Agent: "agent", Principal: "pold", ThreadID: "old"}
}
