package boltstore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/internal/smallfs"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// smallDisk mounts a tmpfs of size bytes for the test (skipping where
// this process may not mount) and returns its directory.
func smallDisk(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	unmount, err := smallfs.Mount(dir, size)
	if errors.Is(err, smallfs.ErrCannotMount) {
		t.Skipf("SKIPPED: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unmount(); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestBoltFullDisk: on a real full filesystem (a small tmpfs filled to
// ENOSPC) appends fail and Ping says so — reads alone would still pass —
// nothing half-written is left (the journal holds whole appends, numbered
// without a gap), and once space is freed Ping is ready again by itself
// and appends go on, with no reopen.
func TestBoltFullDisk(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := smallDisk(t, 4<<20)
	s := openBolt(t, filepath.Join(dir, "bridge.db"))
	t.Cleanup(func() { s.Close() }) // before the unmount (cleanups run last first)
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
	payload := strings.Repeat("x", 1024)
	seq := int64(0)
	appendOne := func() error {
		err := s.Append(ctx, k, store.Entry{Seq: seq + 1, RunID: "r1", Event: fmt.Appendf(nil, `{"n":%d,"p":%q}`, seq+1, payload)})
		if err == nil {
			seq++
		}
		return err
	}
	for range 50 {
		if err := appendOne(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping before the disk filled: %v", err)
	}
	filler, err := smallfs.Fill(dir, "filler")
	if err != nil {
		t.Fatal(err)
	}
	// Pages bbolt freed earlier may take a few more appends; the journal
	// soon needs new ones, which the full disk refuses.
	var appendErr error
	for range 10_000 {
		if appendErr = appendOne(); appendErr != nil {
			break
		}
	}
	if appendErr == nil {
		t.Fatal("appends kept succeeding on a full disk")
	}
	t.Logf("append on the full disk: %v (after %d entries)", appendErr, seq)
	if err := s.Ping(ctx); err == nil {
		t.Fatal("Ping reports a store that cannot write as ready")
	}
	if err := s.Ping(ctx); err == nil {
		t.Fatal("Ping's probe made the store look ready while the disk is still full")
	}
	entries, err := s.Read(ctx, k, 0, 100_000)
	if err != nil {
		t.Fatalf("reads on a full disk: %v", err)
	}
	for i, e := range entries {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d: half-written journal", i, e.Seq)
		}
	}
	if int64(len(entries)) != seq {
		t.Fatalf("the journal holds %d entries, %d appends succeeded", len(entries), seq)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping after space was freed: %v", err)
	}
	for range 50 {
		if err := appendOne(); err != nil {
			t.Fatalf("append after space was freed: %v", err)
		}
	}
	if last, err := s.LastSeq(ctx, k); err != nil || last != seq {
		t.Fatalf("LastSeq %d, %v; want %d", last, err, seq)
	}
	// The file the failed commits left opens and reads whole.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openBolt(t, filepath.Join(dir, "bridge.db"))
	entries, err = s.Read(ctx, k, 0, 100_000)
	if err != nil || int64(len(entries)) != seq {
		t.Fatalf("after a reopen: %d entries, %v; want %d", len(entries), err, seq)
	}
}
