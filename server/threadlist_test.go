package server

import (
	"context"
	"testing"

	"github.com/a2a-agui-bridge/bridge/auth"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/threadview"
)

// TestThreadListKeepsToAllowedAgents: GET /threads lists the caller's
// threads on the agents and teams it may use, and nothing of another
// principal; a caller allowed none of them gets an empty list, not every
// agent's threads.
func TestThreadListKeepsToAllowedAgents(t *testing.T) {
	st := store.NewMemoryStore()
	ctx := context.Background()
	for _, k := range []store.ThreadKey{
		{Agent: "open", Principal: "alice", ThreadID: "t1"},
		{Agent: "closed", Principal: "alice", ThreadID: "t2"},
		{Agent: "desk", Principal: "alice", ThreadID: "t3"},
		{Agent: "open", Principal: "bob", ThreadID: "t4"},
	} {
		if _, err := st.PutThread(ctx, &store.Thread{Key: k, Principal: k.Principal}); err != nil {
			t.Fatal(err)
		}
	}
	cat := &catalog{agents: map[string]*remoteAgent{"open": nil, "closed": nil}, teams: map[string]*team{"desk": nil}, store: st}
	list := func(principal string, allowed func(string, string) bool) []string {
		t.Helper()
		v, err := threads{cat: cat, allowed: allowed}.ListThreads(auth.WithPrincipal(ctx, principal), "", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range v.(*threadview.List).Threads {
			ids = append(ids, s.Agent+"/"+s.ThreadID)
		}
		return ids
	}
	if got := list("alice", nil); len(got) != 3 {
		t.Errorf("alice, no allow lists: %v, want her three threads", got)
	}
	onlyOpen := func(_, agent string) bool { return agent == "open" }
	if got := list("alice", onlyOpen); len(got) != 1 || got[0] != "open/t1" {
		t.Errorf("alice, allowed only open: %v, want [open/t1]", got)
	}
	if got := list("alice", func(string, string) bool { return false }); len(got) != 0 {
		t.Errorf("alice, allowed nothing: %v, want none", got)
	}
	if got := list("bob", nil); len(got) != 1 || got[0] != "open/t4" {
		t.Errorf("bob: %v, want [open/t4]", got)
	}
}
