package boltstore

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// TestBoltReadsEarlierRecords: files written by earlier builds hold thread
// records with the key inside and journal entries as JSON (event base64);
// both still read.
func TestBoltReadsEarlierRecords(t *testing.T) {
	t.Parallel()
	s, err := OpenBoltStore(filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := ThreadKey{Agent: "a", ThreadID: "th"}
	err = s.db.Update(func(tx *bbolt.Tx) error {
		threads, err := principalIn(tx.Bucket(bucketThreads), "", true)
		if err != nil {
			return err
		}
		if err := threads.Put(boltKey(key),
			[]byte(`{"agent":"a","threadId":"th","contextId":"ctx","taskId":"t1","version":3}`)); err != nil {
			return err
		}
		p, err := principalIn(tx.Bucket(bucketJournal), "", true)
		if err != nil {
			return err
		}
		j, err := p.CreateBucketIfNotExists(boltKey(key))
		if err != nil {
			return err
		}
		// base64 of {"type":"RUN_FINISHED"}
		return j.Put(seqKey(1), []byte(`{"runId":"r1","terminal":true,"event":"eyJ0eXBlIjoiUlVOX0ZJTklTSEVEIn0="}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	th, err := s.GetThread(t.Context(), key)
	if err != nil || th.Key != key || th.Own().ContextID != "ctx" || th.Own().TaskID != "t1" || th.Version != 3 {
		t.Fatalf("thread %+v, %v", th, err)
	}
	es, err := s.Read(t.Context(), key, 0, 10)
	if err != nil || len(es) != 1 || es[0].RunID != "r1" || !es[0].Terminal || string(es[0].Event) != `{"type":"RUN_FINISHED"}` {
		t.Fatalf("entries %+v, %v", es, err)
	}
	// New entries follow in the compact form, and read back alike.
	if err := s.Append(t.Context(), key, Entry{Seq: 2, RunID: "r2", Event: []byte(`{"type":"RUN_STARTED"}`)}); err != nil {
		t.Fatal(err)
	}
	es, err = s.Read(t.Context(), key, 1, 10)
	if err != nil || len(es) != 1 || es[0].Seq != 2 || es[0].RunID != "r2" || es[0].Terminal {
		t.Fatalf("entries %+v, %v", es, err)
	}
}

// writeFormat1 makes a file as bridges of format 1 wrote it: threads,
// journals and the interrupt index keyed by agent + "\x00" + threadID
// alone, the principal only inside the record. It holds alice's thread
// (with a run in progress, two journal entries and an interrupt), an
// unauthenticated caller's, the journal of a deleted thread and an
// interrupt of a thread that is gone.
func writeFormat1(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := func(agent, thread string) []byte { return []byte(agent + "\x00" + thread) }
	seq := func(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
	err = db.Update(func(tx *bbolt.Tx) error {
		var errs []error
		bucket := func(name string) *bbolt.Bucket {
			b, err := tx.CreateBucket([]byte(name))
			errs = append(errs, err)
			return b
		}
		meta, threads, journal, interrupts := bucket("meta"), bucket("threads"), bucket("journal"), bucket("interrupts")
		if err := errors.Join(errs...); err != nil {
			return err
		}
		put := func(b *bbolt.Bucket, k []byte, v string) { errs = append(errs, b.Put(k, []byte(v))) }
		put(meta, []byte("format"), "1")
		put(threads, old("agent", "t\x00/1"), `{"contextId":"ctx-alice","principal":"alice","activeRunId":"run-1","owner":"A","version":3}`)
		put(threads, old("agent", "anon"), `{"contextId":"ctx-anon","version":1}`)
		for _, th := range []string{"t\x00/1", "deleted"} {
			j, err := journal.CreateBucket(old("agent", th))
			if err != nil {
				return err
			}
			put(j, seq(1), "\x01\x00\x05run-1"+`{"n":1}`)
			if th != "deleted" {
				put(j, seq(2), "\x01\x01\x05run-1"+`{"n":2}`)
			}
		}
		put(interrupts, []byte("int-alice"), string(old("agent", "t\x00/1")))
		put(interrupts, []byte("int-anon"), string(old("agent", "anon")))
		put(interrupts, []byte("int-gone"), string(old("agent", "gone")))
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBoltMigratesFormat1: a file of format 1 is moved to format 2 when
// opened, in one transaction: each thread — its record, journal and
// interrupts — is found by the principal its record names and by nobody
// else; a journal whose record is gone goes to the principal ""; an
// interrupt of a thread that is gone is dropped; nothing of format 1 is
// left. A second open finds format 2 and moves nothing.
func TestBoltMigratesFormat1(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bridge.db")
	writeFormat1(t, path)
	s, err := OpenBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	alice := ThreadKey{Agent: "agent", Principal: "alice", ThreadID: "t\x00/1"}
	anon := ThreadKey{Agent: "agent", ThreadID: "anon"}
	th, err := s.GetThread(ctx, alice)
	if err != nil || th.Key != alice || th.Own().ContextID != "ctx-alice" || th.Version != 3 || !th.Running("run-1") {
		t.Fatalf("alice's migrated thread: %+v, %v", th, err)
	}
	if es, err := s.Read(ctx, alice, 0, 0); err != nil || len(es) != 2 || es[1].RunID != "run-1" || !es[1].Terminal || string(es[1].Event) != `{"n":2}` {
		t.Errorf("alice's migrated journal: %+v, %v", es, err)
	}
	for _, k := range []ThreadKey{
		{Agent: "agent", ThreadID: alice.ThreadID},
		{Agent: "agent", Principal: "bob", ThreadID: alice.ThreadID},
		{Agent: "agent", Principal: "alice", ThreadID: "anon"},
	} {
		if _, err := s.GetThread(ctx, k); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetThread(%#v) after the migration: %v; want ErrNotFound", k, err)
		}
		if n, err := s.LastSeq(ctx, k); err != nil || n != 0 {
			t.Errorf("LastSeq(%#v) after the migration: %d, %v; want an empty journal", k, n, err)
		}
	}
	if th, err := s.GetThread(ctx, anon); err != nil || th.Own().ContextID != "ctx-anon" {
		t.Errorf("the unauthenticated caller's thread: %+v, %v", th, err)
	}
	if n, err := s.LastSeq(ctx, ThreadKey{Agent: "agent", ThreadID: "deleted"}); err != nil || n != 1 {
		t.Errorf("the journal of a deleted thread: last seq %d, %v; want 1", n, err)
	}
	if active, err := s.ActiveThreads(ctx); err != nil || len(active) != 1 || active[0] != alice {
		t.Errorf("ActiveThreads after the migration = %#v, %v; want alice's thread", active, err)
	}
	for _, tc := range []struct {
		principal, id string
		want          ThreadKey
	}{
		{"alice", "int-alice", alice},
		{"", "int-anon", anon},
		{"", "int-alice", ThreadKey{}},
		{"bob", "int-alice", ThreadKey{}},
		{"", "int-gone", ThreadKey{}},
	} {
		got, err := s.InterruptThread(ctx, tc.principal, tc.id)
		if tc.want == (ThreadKey{}) && !errors.Is(err, ErrNotFound) || tc.want != (ThreadKey{}) && (err != nil || got != tc.want) {
			t.Errorf("InterruptThread(%q, %s) = %#v, %v; want %#v", tc.principal, tc.id, got, err, tc.want)
		}
	}
	// Nothing of format 1 is left beside the principals' buckets.
	err = s.db.View(func(tx *bbolt.Tx) error {
		if f := tx.Bucket(bucketMeta).Get(keyFormat); string(f) != boltFormat {
			t.Errorf("format %q, want %s", f, boltFormat)
		}
		for _, name := range [][]byte{bucketThreads, bucketJournal, bucketInterrupts} {
			if keys := format1Keys(tx.Bucket(name), false); len(keys) > 0 {
				t.Errorf("format-1 values left in %s: %q", name, keys)
			}
			if keys := format1Keys(tx.Bucket(name), true); len(keys) > 0 {
				t.Errorf("format-1 buckets left in %s: %q", name, keys)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The thread goes on: its owner writes and appends.
	th.Active = nil
	if err := s.Append(ctx, alice, Entry{Seq: 3, RunID: "run-2", Event: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.PutThread(ctx, th); err != nil || v != 4 {
		t.Fatalf("PutThread on the migrated thread: %d, %v", v, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := OpenBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if th, err := again.GetThread(ctx, alice); err != nil || th.Version != 4 {
		t.Errorf("after a second open: %+v, %v; want version 4", th, err)
	}
	if n, err := again.LastSeq(ctx, alice); err != nil || n != 3 {
		t.Errorf("after a second open: last seq %d, %v; want 3", n, err)
	}
	// A format this build does not know is refused, not migrated.
	err = again.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyFormat, []byte("9")) })
	if err := errors.Join(err, again.Close()); err != nil {
		t.Fatal(err)
	}
	if s, err := OpenBoltStore(path); err == nil {
		s.Close()
		t.Fatal("OpenBoltStore of a file of format 9 succeeded")
	}
}
