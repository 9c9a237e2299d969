package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/tasks/threadview"
)

func threadList(t *testing.T, r reply) threadview.List {
	t.Helper()
	var l threadview.List
	if r.status != http.StatusOK || json.Unmarshal(r.body, &l) != nil {
		t.Fatalf("thread list: %d %s", r.status, r.body)
	}
	return l
}

func listedIDs(l threadview.List) []string {
	var out []string
	for _, th := range l.Threads {
		out = append(out, th.Agent+"/"+th.ThreadID)
	}
	return out
}

// TestDeleteThreadWhileStreaming: a delete cancels the run in progress
// (the agent gets CancelTask), its stream ends, and the thread is gone;
// deleting again answers the same.
func TestDeleteThreadWhileStreaming(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	const thread = "th-delete-live"
	run := b.open(t, "counter", runBody(thread, "run-1", false, userMsg("u1", "count")))
	run.until(t, isContent)
	follower := b.stream(t, http.MethodGet, "/agents/counter/threads/"+thread+"/events", nil, nil)
	follower.until(t, isContent)
	for range 2 {
		if r := b.do(t, http.MethodDelete, "/agents/counter/threads/"+thread, "", nil); r.status != http.StatusNoContent || len(r.body) != 0 {
			t.Fatalf("DELETE: %d %s, want 204", r.status, r.body)
		}
	}
	run.result(t).wantError(t, "thread_deleted")
	follower.result(t).wantError(t, "thread_deleted")
	if got := b.demo.Cancels("counter"); len(got) != 1 {
		t.Errorf("the agent got CancelTask %v, want once", got)
	}
	for _, path := range []string{"", "/events"} {
		if r := b.do(t, http.MethodGet, "/agents/counter/threads/"+thread+path, "", nil, "Accept", "application/json"); r.status != http.StatusNotFound {
			t.Errorf("GET thread%s after the delete: %d %s, want 404", path, r.status, r.body)
		}
	}
	if l := threadList(t, b.do(t, http.MethodGet, "/agents/counter/threads", "", nil)); len(l.Threads) != 0 {
		t.Errorf("list after the delete: %v", listedIDs(l))
	}
	// The id starts a new thread.
	if r := b.do(t, http.MethodPost, "/agents/replier", "", runBody(thread, "run-2", false, userMsg("u1", "again"))); r.status != http.StatusOK {
		t.Errorf("a run on the deleted id: %d %s", r.status, r.body)
	}
}

// TestThreadListPerPrincipal: each principal lists its own threads, newest
// activity first, by pages; another principal's delete of one of them is
// answered as for an id nobody used and deletes nothing.
func TestThreadListPerPrincipal(t *testing.T) {
	t.Parallel()
	b := startBridge(t, withAuth(nil))
	for i, thread := range []string{"th-a", "th-b", "th-c"} {
		if r := b.do(t, http.MethodPost, "/agents/replier", aliceKey, runBody(thread, "run-a", false, userMsg("u1", fmt.Sprintf("alice asks %d", i)))); r.status != http.StatusOK {
			t.Fatalf("alice's run: %d %s", r.status, r.body)
		}
	}
	if r := b.do(t, http.MethodPost, "/agents/asker", aliceKey, runBody("th-ask", "run-q", false, userMsg("u1", "weather?"))); r.status != http.StatusOK {
		t.Fatalf("alice's asker run: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/replier", bobKey, runBody("th-a", "run-b", false, userMsg("u1", "bob asks"))); r.status != http.StatusOK {
		t.Fatalf("bob's run: %d %s", r.status, r.body)
	}

	l := threadList(t, b.do(t, http.MethodGet, "/agents/replier/threads?limit=2", aliceKey, nil))
	if got := listedIDs(l); len(got) != 2 || got[0] != "replier/th-c" || got[1] != "replier/th-b" || l.NextCursor == "" {
		t.Fatalf("alice's first page: %v next %q", got, l.NextCursor)
	}
	if th := l.Threads[0]; th.Title != "alice asks 2" || th.MessageCount < 2 || th.Status != "idle" || th.CreatedAt.IsZero() || th.LastActivityAt.Before(th.CreatedAt) {
		t.Errorf("summary of th-c: %+v", th)
	}
	next := threadList(t, b.do(t, http.MethodGet, "/agents/replier/threads?limit=2&cursor="+l.NextCursor, aliceKey, nil))
	if got := listedIDs(next); len(got) != 1 || got[0] != "replier/th-a" || next.NextCursor != "" {
		t.Fatalf("alice's second page: %v next %q", got, next.NextCursor)
	}
	all := threadList(t, b.do(t, http.MethodGet, "/threads", aliceKey, nil))
	if got := listedIDs(all); len(got) != 4 || got[0] != "asker/th-ask" || all.Threads[0].Status != "interrupted" {
		t.Fatalf("alice's threads over every agent: %v %+v", got, all.Threads)
	}
	bobs := threadList(t, b.do(t, http.MethodGet, "/threads", bobKey, nil))
	if got := listedIDs(bobs); len(got) != 1 || got[0] != "replier/th-a" || bobs.Threads[0].Title != "bob asks" {
		t.Fatalf("bob's threads: %v", bobs.Threads)
	}

	// Bob deleting alice's th-b is answered as for an id nobody used.
	unused := b.do(t, http.MethodDelete, "/agents/replier/threads/th-unused", bobKey, nil)
	theirs := b.do(t, http.MethodDelete, "/agents/replier/threads/th-b", bobKey, nil)
	if unused.status != http.StatusNoContent || theirs.status != unused.status || string(theirs.body) != string(unused.body) {
		t.Errorf("bob's delete of alice's thread: %d %s; of an unused id: %d %s", theirs.status, theirs.body, unused.status, unused.body)
	}
	if r := b.do(t, http.MethodGet, "/agents/replier/threads/th-b", aliceKey, nil); r.status != http.StatusOK {
		t.Errorf("alice's thread after bob's delete: %d %s", r.status, r.body)
	}
	// Alice's own delete of th-a leaves bob's th-a.
	if r := b.do(t, http.MethodDelete, "/agents/replier/threads/th-a", aliceKey, nil); r.status != http.StatusNoContent {
		t.Errorf("alice's delete: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodGet, "/agents/replier/threads/th-a", bobKey, nil); r.status != http.StatusOK {
		t.Errorf("bob's th-a after alice deleted hers: %d %s", r.status, r.body)
	}

	for _, q := range []string{"?limit=0", "?limit=201", "?limit=x", "?cursor=nope"} {
		if r := b.do(t, http.MethodGet, "/agents/replier/threads"+q, aliceKey, nil); r.status != http.StatusBadRequest || errorCode(t, r.body) != "invalid_input" {
			t.Errorf("list%s: %d %s, want 400 invalid_input", q, r.status, r.body)
		}
	}
	if r := b.do(t, http.MethodGet, "/agents/nobody/threads", aliceKey, nil); r.status != http.StatusNotFound || errorCode(t, r.body) != "unknown_agent" {
		t.Errorf("list of an unknown agent: %d %s", r.status, r.body)
	}
}

// TestThreadCap: limits.perPrincipal.maxThreads refuses the run that would
// create one thread more, before anything is written; a thread kept goes
// on, and a deleted one makes room.
func TestThreadCap(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) { c.Limits.PerPrincipal.MaxThreads = 2 })
	for _, thread := range []string{"th-1", "th-2"} {
		if r := b.do(t, http.MethodPost, "/agents/replier", "", runBody(thread, "run-1", false, userMsg("u1", "hi"))); r.status != http.StatusOK {
			t.Fatalf("run on %s: %d %s", thread, r.status, r.body)
		}
	}
	r := b.do(t, http.MethodPost, "/agents/replier", "", runBody("th-3", "run-1", false, userMsg("u1", "hi")))
	if r.status != http.StatusTooManyRequests || errorCode(t, r.body) != "thread_limit" {
		t.Fatalf("the third thread: %d %s, want 429 thread_limit", r.status, r.body)
	}
	if r := b.do(t, http.MethodGet, "/agents/replier/threads/th-3", "", nil); r.status != http.StatusNotFound {
		t.Errorf("the refused thread: %d %s, want 404", r.status, r.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/replier", "", runBody("th-1", "run-2", false, userMsg("u1", "hi"), userMsg("u2", "more"))); r.status != http.StatusOK {
		t.Errorf("a run on a kept thread: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodDelete, "/agents/replier/threads/th-2", "", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := b.do(t, http.MethodPost, "/agents/replier", "", runBody("th-3", "run-1", false, userMsg("u1", "hi"))); r.status != http.StatusOK {
		t.Errorf("the third thread after a delete: %d %s", r.status, r.body)
	}
}

// TestRetentionSweep: with a clock moved past the TTL, the sweep deletes
// the idle threads, and only those.
func TestRetentionSweep(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	for _, thread := range []string{"th-old-1", "th-old-2"} {
		if r := b.do(t, http.MethodPost, "/agents/replier", "", runBody(thread, "run-1", false, userMsg("u1", "hi"))); r.status != http.StatusOK {
			t.Fatalf("run: %d %s", r.status, r.body)
		}
	}
	const ttl = time.Hour
	if n, err := sweepOnce(t.Context(), b.store, time.Now().Add(ttl/2), ttl); err != nil || n != 0 {
		t.Fatalf("sweep within the TTL: %d, %v; want nothing deleted", n, err)
	}
	run := b.open(t, "counter", runBody("th-busy", "run-1", false, userMsg("u1", "count")))
	run.until(t, isContent)
	if n, err := sweepOnce(t.Context(), b.store, time.Now().Add(2*ttl), ttl); err != nil || n != 2 {
		t.Fatalf("sweep past the TTL: %d, %v; want the 2 idle threads", n, err)
	}
	for _, thread := range []string{"th-old-1", "th-old-2"} {
		if r := b.do(t, http.MethodGet, "/agents/replier/threads/"+thread, "", nil); r.status != http.StatusNotFound {
			t.Errorf("%s after the sweep: %d, want 404", thread, r.status)
		}
	}
	if r := b.do(t, http.MethodGet, "/agents/counter/threads/th-busy", "", nil); r.status != http.StatusOK {
		t.Errorf("the running thread after the sweep: %d, want 200", r.status)
	}
	b.cancelThread(t, "counter", "th-busy")
	run.result(t)
}

// TestScaleOutDeleteThread: two bridge processes on one Redis. A delete
// on the instance that does not drive the run cancels it (the agent gets
// CancelTask), the run's stream on the other ends, and the thread is gone
// on both; a delete on the driving instance ends its stream, and a
// follower's on the other instance, with RUN_ERROR thread_deleted.
func TestScaleOutDeleteThread(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	c := newCluster(t, bridgeBin, demo, 2, "counter")
	a, b := c.bridge(0), c.bridge(1)

	run := a.open(t, "counter", runBody("th-del-b", "run-1", false, userMsg("u1", "count")))
	run.until(t, isContent)
	if r := b.do(t, http.MethodDelete, "/agents/counter/threads/th-del-b", "", nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE on the other instance: %d %s", r.status, r.body)
	}
	wantCancelledRun(t, run.result(t), false)
	for i, inst := range []*testBridge{a, b} {
		if r := inst.do(t, http.MethodGet, "/agents/counter/threads/th-del-b", "", nil); r.status != http.StatusNotFound {
			t.Errorf("GET on instance %d after the delete: %d %s, want 404", i, r.status, r.body)
		}
		if l := threadList(t, inst.do(t, http.MethodGet, "/threads", "", nil)); len(l.Threads) != 0 {
			t.Errorf("list on instance %d after the delete: %v", i, listedIDs(l))
		}
	}

	run = a.open(t, "counter", runBody("th-del-a", "run-1", false, userMsg("u1", "count")))
	run.until(t, isContent)
	follower := b.stream(t, http.MethodGet, "/agents/counter/threads/th-del-a/events", nil, nil)
	follower.until(t, isContent)
	if r := a.do(t, http.MethodDelete, "/agents/counter/threads/th-del-a", "", nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE on the driving instance: %d %s", r.status, r.body)
	}
	run.result(t).wantError(t, "thread_deleted")
	follower.result(t).wantError(t, "thread_deleted")
	if r := b.do(t, http.MethodGet, "/agents/counter/threads/th-del-a", "", nil); r.status != http.StatusNotFound {
		t.Errorf("GET on the other instance: %d %s, want 404", r.status, r.body)
	}
}
