package boltstore

import (
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
		if err := tx.Bucket(bucketThreads).Put(boltKey(key),
			[]byte(`{"agent":"a","threadId":"th","contextId":"ctx","taskId":"t1","version":3}`)); err != nil {
			return err
		}
		j, err := tx.Bucket(bucketJournal).CreateBucketIfNotExists(boltKey(key))
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
	if err != nil || th.Key != key || th.ContextID != "ctx" || th.TaskID != "t1" || th.Version != 3 {
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
