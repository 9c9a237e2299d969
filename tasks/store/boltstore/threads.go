package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"go.etcd.io/bbolt"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// The thread list's indexes (format 3), written in the transaction that
// writes the record, so a list never decodes a record:
//
//	recent:    "\x00" + principal → bucket of
//	           inverted time + boltKey → the ThreadSummary's JSON
//	summaries: "\x00" + principal → bucket of
//	           boltKey → time + flags (bit 0: active run)
//	idle:      time + uvarint(len(principal)) + principal + boltKey → ""
//
// time is the thread's last activity, 8-byte big-endian Unix nanoseconds,
// and inverted time is MaxUint64 minus it: recent sorts a principal's
// threads newest first (then by agent and thread id, CompareSummaries'
// order), idle sorts every thread without a run oldest first, so a list
// page and a retention sweep are each one cursor run. summaries says where
// a thread's entries in the other two are, to move them when it changes.
var (
	bucketRecent    = []byte("recent")
	bucketSummaries = []byte("summaries")
	bucketIdle      = []byte("idle")
)

const flagActive = 0x01

func timeKey(nanos int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(nanos)) }

func recentKey(nanos int64, k []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, math.MaxUint64-uint64(nanos)), k...)
}

func idleKey(nanos int64, principal string, k []byte) []byte {
	b := binary.AppendUvarint(timeKey(nanos), uint64(len(principal)))
	return append(append(b, principal...), k...)
}

// parseIdleKey reads an idleKey back into its time and thread.
func parseIdleKey(b []byte) (int64, ThreadKey, error) {
	if len(b) < 9 {
		return 0, ThreadKey{}, fmt.Errorf("malformed idle key %q", b)
	}
	nanos := int64(binary.BigEndian.Uint64(b))
	n, w := binary.Uvarint(b[8:])
	rest := b[8+max(w, 0):]
	if w <= 0 || uint64(len(rest)) < n {
		return 0, ThreadKey{}, fmt.Errorf("malformed idle key %q", b)
	}
	key, err := parseBoltKey(string(rest[:n]), rest[n:])
	return nanos, key, err
}

// indexThread files th's summary (at version) in the indexes, in place of
// what they held of it.
func indexThread(tx *bbolt.Tx, th *Thread, version int64) error {
	if err := unindexThread(tx, th.Key); err != nil {
		return err
	}
	sum := store.Summarize(th, version)
	v, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	k, nanos := boltKey(th.Key), sum.LastActivityAt.UnixNano()
	recent, err := principalIn(tx.Bucket(bucketRecent), th.Key.Principal, true)
	if err != nil {
		return err
	}
	summaries, err := principalIn(tx.Bucket(bucketSummaries), th.Key.Principal, true)
	if err != nil {
		return err
	}
	var flags byte
	if sum.Active {
		flags = flagActive
	} else if err := tx.Bucket(bucketIdle).Put(idleKey(nanos, th.Key.Principal, k), nil); err != nil {
		return err
	}
	if err := recent.Put(recentKey(nanos, k), v); err != nil {
		return err
	}
	return summaries.Put(k, append(timeKey(nanos), flags))
}

// unindexThread removes key's entries from the indexes.
func unindexThread(tx *bbolt.Tx, key ThreadKey) error {
	summaries, _ := principalIn(tx.Bucket(bucketSummaries), key.Principal, false)
	if summaries == nil {
		return nil
	}
	k := boltKey(key)
	loc := summaries.Get(k)
	if len(loc) != 9 {
		return nil
	}
	nanos := int64(binary.BigEndian.Uint64(loc))
	if loc[8]&flagActive == 0 {
		if err := tx.Bucket(bucketIdle).Delete(idleKey(nanos, key.Principal, k)); err != nil {
			return err
		}
	}
	if recent, _ := principalIn(tx.Bucket(bucketRecent), key.Principal, false); recent != nil {
		if err := recent.Delete(recentKey(nanos, k)); err != nil {
			return err
		}
	}
	return summaries.Delete(k)
}

// migrateFormat2 builds the list indexes of a format-2 file from its
// records, in the transaction that marks the file format 3.
func migrateFormat2(tx *bbolt.Tx) error {
	return forEachThread(tx, func(key ThreadKey, v []byte) error {
		th := new(Thread)
		if err := json.Unmarshal(v, th); err != nil {
			return fmt.Errorf("decode thread %s: %w", key, err)
		}
		th.Key = key
		return indexThread(tx, th, th.Version)
	})
}

// ListThreads implements Store: one cursor run over the principal's recent
// index, from the cursor's place.
func (s *BoltStore) ListThreads(ctx context.Context, q store.ListQuery) (store.ThreadPage, error) {
	if err := ctx.Err(); err != nil {
		return store.ThreadPage{}, err
	}
	var from []byte
	if q.Cursor != "" {
		c, err := store.ParseCursor(q.Cursor)
		if err != nil {
			return store.ThreadPage{}, err
		}
		from = recentKey(c.LastActivityAt.UnixNano(), boltKey(ThreadKey{Agent: c.Agent, ThreadID: c.ThreadID}))
	}
	limit := max(q.Limit, 1)
	var out []store.ThreadSummary
	err := s.db.View(func(tx *bbolt.Tx) error {
		recent, _ := principalIn(tx.Bucket(bucketRecent), q.Principal, false)
		if recent == nil {
			return nil
		}
		c := recent.Cursor()
		k, v := c.First()
		if from != nil {
			if k, v = c.Seek(from); k != nil && bytes.Equal(k, from) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(out) <= limit; k, v = c.Next() {
			var sum store.ThreadSummary
			if err := json.Unmarshal(v, &sum); err != nil {
				return fmt.Errorf("decode summary %q: %w", k, err)
			}
			if q.Wants(sum.Agent) {
				sum.Key = ThreadKey{Agent: sum.Agent, Principal: q.Principal, ThreadID: sum.ThreadID}
				out = append(out, sum)
			}
		}
		return nil
	})
	if err != nil {
		return store.ThreadPage{}, fmt.Errorf("tasks: list threads: %w", err)
	}
	return store.Page(out, limit), nil
}

// CountThreads implements Store.
func (s *BoltStore) CountThreads(ctx context.Context, principal string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := s.db.View(func(tx *bbolt.Tx) error {
		if b, _ := principalIn(tx.Bucket(bucketSummaries), principal, false); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// PurgeThread implements Store: one transaction. The file does not shrink:
// bbolt reuses the freed pages for what is written next (bridge compact
// shrinks it offline).
func (s *BoltStore) PurgeThread(ctx context.Context, key ThreadKey, version int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := boltKey(key)
	found := false
	err := s.update(func(tx *bbolt.Tx) error {
		threads, _ := principalIn(tx.Bucket(bucketThreads), key.Principal, false)
		var v []byte
		if threads != nil {
			v = threads.Get(k)
		}
		if found = v != nil; found {
			th := new(Thread)
			if err := json.Unmarshal(v, th); err != nil {
				return fmt.Errorf("decode thread: %w", err)
			}
			if version > 0 && th.Version != version {
				return ErrConflict
			}
			if ix, _ := principalIn(tx.Bucket(bucketInterrupts), key.Principal, false); ix != nil {
				for _, id := range store.InterruptIDs(th) {
					if bytes.Equal(ix.Get([]byte(id)), k) {
						if err := ix.Delete([]byte(id)); err != nil {
							return err
						}
					}
				}
			}
			if err := threads.Delete(k); err != nil {
				return err
			}
		}
		if p, _ := principalIn(tx.Bucket(bucketJournal), key.Principal, false); p != nil && p.Bucket(k) != nil {
			if err := p.DeleteBucket(k); err != nil {
				return err
			}
		}
		return unindexThread(tx, key)
	})
	if errors.Is(err, ErrConflict) {
		return err
	}
	if err != nil {
		return fmt.Errorf("tasks: purge thread %s: %w", key, err)
	}
	s.notify(key) // its Waits find the journal gone
	if !found {
		return ErrNotFound
	}
	return nil
}

// IdleThreads implements Store: one cursor run over the idle index.
func (s *BoltStore) IdleThreads(ctx context.Context, before time.Time, limit int) ([]store.ThreadSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []store.ThreadSummary
	end := timeKey(before.UnixNano())
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketIdle).Cursor()
		for k, _ := c.First(); k != nil && bytes.Compare(k, end) < 0 && len(out) < limit; k, _ = c.Next() {
			nanos, key, err := parseIdleKey(k)
			if err != nil {
				return err
			}
			recent, _ := principalIn(tx.Bucket(bucketRecent), key.Principal, false)
			if recent == nil {
				return fmt.Errorf("idle thread %s has no summary", key)
			}
			var sum store.ThreadSummary
			if err := json.Unmarshal(recent.Get(recentKey(nanos, boltKey(key))), &sum); err != nil {
				return fmt.Errorf("decode summary of %s: %w", key, err)
			}
			sum.Key = key
			out = append(out, sum)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: idle threads: %w", err)
	}
	return out, nil
}
