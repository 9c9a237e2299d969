package boltstore

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// TestCompact: after half of many threads are purged the file keeps its
// size; Compact shrinks it, and what is left reads as before.
func TestCompact(t *testing.T) {
	path := t.TempDir() + "/bridge.db"
	s, err := OpenBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const n = 400
	key := func(i int) ThreadKey { return ThreadKey{Agent: "a", Principal: "p", ThreadID: fmt.Sprint("t", i)} }
	for i := range n {
		th := &Thread{Key: key(i), Principal: "p", Messages: []agui.Message{{ID: "m", Role: agui.RoleUser, Content: agui.TextContent(strings.Repeat("x", 2000))}}}
		if _, err := s.PutThreadAndAppend(ctx, th, store.Entry{Seq: 1, RunID: "r", Event: []byte(strings.Repeat("y", 2000))}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n / 2 {
		if err := s.PurgeThread(ctx, key(i), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Compact(path); err == nil {
		t.Fatal("Compact of a file in use succeeded")
	}
	s.Close()
	before, after, err := Compact(path)
	if err != nil {
		t.Fatal(err)
	}
	if after >= before*3/4 {
		t.Errorf("compacted %d bytes to %d: want it well smaller", before, after)
	}
	if st, _ := os.Stat(path); st.Size() != after {
		t.Errorf("file is %d bytes, Compact says %d", st.Size(), after)
	}
	s, err = OpenBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n2, err := s.CountThreads(ctx, "p"); err != nil || n2 != n/2 {
		t.Errorf("threads after compaction: %d, %v; want %d", n2, err, n/2)
	}
	if es, err := s.Read(ctx, key(n-1), 0, 10); err != nil || len(es) != 1 {
		t.Errorf("journal after compaction: %d entries, %v", len(es), err)
	}
}
