package boltstore_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/store/boltstore"
	"github.com/a2a-agui-bridge/bridge/tasks/store/storetest"
)

func openBolt(t testing.TB, path string) *boltstore.BoltStore {
	t.Helper()
	s, err := boltstore.OpenBoltStore(path)
	if err != nil {
		t.Fatalf("OpenBoltStore: %v", err)
	}
	return s
}

func TestBoltStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return openBolt(t, filepath.Join(t.TempDir(), "bridge.db"))
	})
}

func TestBoltWaitBlocks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		storetest.WaitBlocks(t, openBolt(t, filepath.Join(t.TempDir(), "bridge.db")))
	})
}

func TestBoltReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "data", "bridge.db")
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}

	s := openBolt(t, path)
	th := &store.Thread{Key: k, Members: map[string]*store.MemberRecord{"agent": {ContextID: "ctx-1", TaskID: "task-1"}}, SeenMessageIDs: []string{"m1"}}
	v, err := s.PutThread(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	th.Version = v
	th.Routed = "completed"
	if _, err := s.PutThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, k,
		store.Entry{Seq: 1, RunID: "run-1", Event: []byte(`{"type":"RUN_STARTED"}`)},
		store.Entry{Seq: 2, RunID: "run-1", Event: []byte(`{"type":"RUN_FINISHED"}`), Terminal: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, k, store.Entry{Seq: 3, RunID: "run-2", Event: []byte(`{"type":"RUN_STARTED"}`)}); err != nil {
		t.Fatal(err)
	}
	wantThread, err := s.GetThread(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	wantJournal, err := s.Read(ctx, k, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openBolt(t, path)
	defer s.Close()
	gotThread, err := s.GetThread(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantThread, gotThread); diff != "" {
		t.Errorf("thread after reopen (-want +got):\n%s", diff)
	}
	gotJournal, err := s.Read(ctx, k, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantJournal, gotJournal, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("journal after reopen (-want +got):\n%s", diff)
	}
	if last, err := s.LastSeq(ctx, k); err != nil || last != 3 {
		t.Errorf("LastSeq after reopen = %d, %v; want 3", last, err)
	}
	if err := s.Append(ctx, k, store.Entry{Seq: 3, RunID: "run-2", Event: []byte(`{}`)}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Append reusing seq 3 after reopen: %v, want ErrConflict", err)
	}
	if err := s.Append(ctx, k, store.Entry{Seq: 4, RunID: "run-2", Event: []byte(`{}`)}); err != nil {
		t.Errorf("Append after reopen: %v", err)
	}
	wantThread.Routed = "input-required"
	if v, err := s.PutThread(ctx, wantThread); err != nil || v != 3 {
		t.Errorf("PutThread(version 2) after reopen = %d, %v; want 3", v, err)
	}
}

func TestBoltFileModes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "bridge.db")
	openBolt(t, path).Close()
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700}, {path, 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		// The umask can only remove bits, never add group or other ones.
		if got := fi.Mode().Perm(); got&^c.want != 0 {
			t.Errorf("%s has mode %v, want at most %v", c.path, got, c.want)
		}
	}
}

// TestBoltLocked is a second bridge started on the same file: it must fail
// with a clear error instead of hanging. It takes the lock timeout (1s).
func TestBoltLocked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bridge.db")
	s := openBolt(t, path)
	defer s.Close()
	second, err := boltstore.OpenBoltStore(path)
	if err == nil {
		second.Close()
		t.Fatal("a second OpenBoltStore of an open file succeeded")
	}
	if !errors.Is(err, bolterrors.ErrTimeout) {
		t.Errorf("second OpenBoltStore error = %v, want one wrapping bbolt's ErrTimeout", err)
	}
}

func TestBoltAfterClose(t *testing.T) {
	t.Parallel()
	s := openBolt(t, filepath.Join(t.TempDir(), "bridge.db"))
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
	waited := make(chan error, 1)
	go func() { waited <- s.Wait(t.Context(), k, 0) }()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A Wait in progress or started after Close ends instead of hanging.
	if err := <-waited; !errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		t.Errorf("Wait across Close: error = %v, want ErrDatabaseNotOpen", err)
	}
	if err := s.Wait(t.Context(), k, 0); !errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		t.Errorf("Wait after Close: error = %v, want ErrDatabaseNotOpen", err)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping after Close succeeded")
	}
	if err := s.Append(t.Context(), k, store.Entry{Seq: 1, Event: []byte(`{}`)}); err == nil {
		t.Error("Append after Close succeeded")
	}
}

func TestBoltRefusesOtherFormat(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "not-bolt.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := boltstore.OpenBoltStore(path); err == nil {
		s.Close()
		t.Fatal("OpenBoltStore of a file that is not a bbolt database succeeded")
	}
}

// BenchmarkBoltAppend is dominated by the fsync of each commit.
func BenchmarkBoltAppend(b *testing.B) {
	s := openBolt(b, filepath.Join(b.TempDir(), "bridge.db"))
	defer s.Close()
	storetest.BenchmarkAppend(b, s)
}
