package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// BoltStore is the embedded backend: one bbolt file that survives
// restarts. Every write is in a bbolt transaction, fsynced on commit, so a
// crash leaves either all of a PutThread or Append or none of it; Appends
// running at the same time share a transaction.
//
// The file holds four top-level buckets; the last three hold one bucket
// per principal, named "\x00" + principal (the principal is "" without
// auth, and a bucket name cannot be empty):
//
//	meta:       "format" → boltFormat
//	threads:    "\x00" + principal → bucket of
//	            agent + "\x00" + threadID → the Thread's JSON
//	journal:    "\x00" + principal → bucket of
//	            agent + "\x00" + threadID → bucket of
//	            8-byte big-endian seq → entry (see encodeEntry)
//	interrupts: "\x00" + principal → bucket of
//	            interrupt id → agent + "\x00" + threadID
//
// A thread is found only in its principal's bucket, so the same thread id
// used by two principals is two threads. Agent names never contain NUL
// (config allows [a-z0-9_-]), so the key is unambiguous whatever the
// thread id (or the principal, a bucket name of its own) holds. Big-endian
// seqs sort in numeric order, so Read is a cursor seek and LastSeq the
// cursor's last key. Format 1 had no principal buckets (see migrateFormat1).
//
// bbolt locks the file for one process. Wait is woken in process, by this
// store's own Appends; tailing a journal that other processes write is the
// Redis backend's job.
type BoltStore struct {
	db   *bbolt.DB
	path string

	// groups commits the Appends waiting at once (see Append).
	groups store.GroupWriter[*appendRequest]

	// writeErr is the failure of the last write transaction (nil once
	// one succeeds): Ping reports it, so readiness says the store cannot
	// take writes (a full disk, an unwritable file) even though reads,
	// all Ping would otherwise try, still work.
	writeMu  sync.Mutex
	writeErr error

	mu      sync.Mutex
	waiters map[ThreadKey]*boltWaiters // keys with a Wait in progress
	closed  bool
	done    chan struct{} // closed by Close, ends every Wait
}

// boltWaiters is the wake-up channel shared by the Waits on one key.
type boltWaiters struct {
	ch chan struct{} // closed by the key's next Append
	n  int           // Waits holding ch
}

var _ Store = (*BoltStore)(nil)

// boltLockTimeout bounds how long OpenBoltStore waits for another process
// to release the file: long enough for a restarting bridge to let go, short
// enough that a second bridge on the same file fails with a clear error.
const boltLockTimeout = time.Second

// boltFormat is the layout described on BoltStore. A file of format 1 is
// migrated when opened (migrateFormat1); one written in a layout this
// build does not know is refused rather than misread.
const boltFormat = "3"

var (
	bucketMeta    = []byte("meta")
	bucketThreads = []byte("threads")
	bucketJournal = []byte("journal")
	// bucketInterrupts maps an interrupt id to its thread's key.
	bucketInterrupts = []byte("interrupts")
	keyFormat        = []byte("format")
	// keyProbe (in meta) is rewritten by Ping's write probe.
	keyProbe = []byte("probe")
)

// Journal entries are stored compactly, since every streamed chunk is
// one: a format byte (entryBinary), a flags byte (bit 0: terminal), the run
// id as a uvarint length and its bytes, then the event's bytes as written to
// clients. Entries written by earlier builds are a JSON object
// {"runId","terminal","event"} (event base64), told apart by their first
// byte ('{'), and still read.
const (
	entryBinary   = 0x01
	entryTerminal = 0x01
)

func encodeEntry(e Entry) []byte {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(e.RunID)+len(e.Event))
	var flags byte
	if e.Terminal {
		flags |= entryTerminal
	}
	b = append(b, entryBinary, flags)
	b = binary.AppendUvarint(b, uint64(len(e.RunID)))
	b = append(b, e.RunID...)
	return append(b, e.Event...)
}

// decodeEntry decodes a stored entry, copying out of v (which may point
// into bbolt's mmap).
func decodeEntry(v []byte) (Entry, error) {
	if len(v) > 0 && v[0] == '{' {
		var legacy struct {
			RunID    string `json:"runId"`
			Terminal bool   `json:"terminal"`
			Event    []byte `json:"event"`
		}
		if err := json.Unmarshal(v, &legacy); err != nil {
			return Entry{}, err
		}
		return Entry{RunID: legacy.RunID, Terminal: legacy.Terminal, Event: legacy.Event}, nil
	}
	if len(v) < 2 || v[0] != entryBinary {
		return Entry{}, fmt.Errorf("unknown entry format %x", v[:min(len(v), 2)])
	}
	n, k := binary.Uvarint(v[2:])
	if k <= 0 || uint64(len(v)-2-k) < n {
		return Entry{}, errors.New("truncated entry")
	}
	rest := v[2+k:]
	return Entry{
		RunID:    string(rest[:n]),
		Terminal: v[1]&entryTerminal != 0,
		Event:    append([]byte(nil), rest[n:]...),
	}, nil
}

// OpenBoltStore opens the store file at path, creating it (mode 0600) and
// its directory (mode 0700) if needed. It fails after about a second if
// another process has the file open.
func OpenBoltStore(path string) (*BoltStore, error) {
	if path == "" {
		return nil, errors.New("tasks: open bolt store: empty path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("tasks: open bolt store: %w", err)
	}
	// The free-page list is not written on each commit but rebuilt when
	// the file is opened (as etcd does): a commit's cost then no longer
	// grows with the free list of a large, busy journal.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: boltLockTimeout,
		NoFreelistSync: true, FreelistType: bbolt.FreelistMapType})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("tasks: open bolt store %s: another process has it open (gave up after %s): %w",
			path, boltLockTimeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("tasks: open bolt store %s: %w", path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		f := meta.Get(keyFormat)
		if f != nil && string(f) != boltFormat && string(f) != "1" && string(f) != "2" {
			return fmt.Errorf("file format %q, this bridge reads %q", f, boltFormat)
		}
		for _, name := range [][]byte{bucketThreads, bucketJournal, bucketInterrupts, bucketRecent, bucketSummaries, bucketIdle} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		switch string(f) {
		case boltFormat:
			return nil
		case "1":
			// In this transaction: a crash or a failure leaves the file as
			// it was, in format 1, and the next start migrates it again.
			if err := migrateFormat1(tx); err != nil {
				return fmt.Errorf("migrate format 1 to %s: %w", boltFormat, err)
			}
			fallthrough
		case "2":
			if err := migrateFormat2(tx); err != nil {
				return fmt.Errorf("migrate format 2 to %s: %w", boltFormat, err)
			}
		}
		return meta.Put(keyFormat, []byte(boltFormat))
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("tasks: open bolt store %s: %w", path, err)
	}
	s := &BoltStore{
		db:      db,
		path:    path,
		waiters: make(map[ThreadKey]*boltWaiters),
		done:    make(chan struct{}),
	}
	s.groups.Write = s.commitGroup
	return s, nil
}

// boltKey is a thread's key within its principal's bucket.
func boltKey(k ThreadKey) []byte {
	b := make([]byte, 0, len(k.Agent)+1+len(k.ThreadID))
	b = append(b, k.Agent...)
	b = append(b, 0)
	return append(b, k.ThreadID...)
}

// parseBoltKey reads a boltKey of principal's bucket.
func parseBoltKey(principal string, k []byte) (ThreadKey, error) {
	agent, thread, ok := strings.Cut(string(k), "\x00")
	if !ok {
		return ThreadKey{}, fmt.Errorf("malformed thread key %q", k)
	}
	return ThreadKey{Agent: agent, Principal: principal, ThreadID: thread}, nil
}

// principalBucket is the name of principal's bucket in threads, journal
// and interrupts.
func principalBucket(principal string) []byte {
	return append([]byte{0}, principal...)
}

// principalIn returns principal's bucket in parent, creating it when
// create is set (in a writable transaction); nil when it does not exist.
func principalIn(parent *bbolt.Bucket, principal string, create bool) (*bbolt.Bucket, error) {
	if create {
		return parent.CreateBucketIfNotExists(principalBucket(principal))
	}
	return parent.Bucket(principalBucket(principal)), nil
}

// forEachPrincipal calls fn for each principal's bucket in parent.
func forEachPrincipal(parent *bbolt.Bucket, fn func(principal string, b *bbolt.Bucket) error) error {
	return parent.ForEachBucket(func(k []byte) error {
		if len(k) == 0 || k[0] != 0 {
			return fmt.Errorf("bucket %q is not a principal's", k)
		}
		return fn(string(k[1:]), parent.Bucket(k))
	})
}

// journalOf returns key's journal bucket in tx, nil when it has none.
func journalOf(tx *bbolt.Tx, key ThreadKey) *bbolt.Bucket {
	p := tx.Bucket(bucketJournal).Bucket(principalBucket(key.Principal))
	if p == nil {
		return nil
	}
	return p.Bucket(boltKey(key))
}

// migrateFormat1 moves the records of a format-1 file, filed under
// agent + "\x00" + threadID with the principal only inside the record, into
// their principal's buckets: each thread under the principal its record
// names, its journal (moved as a bucket, not copied) and its interrupts
// with it. A journal whose thread record is gone goes to the principal ""
// (it cannot be told whose it was; with auth on, no caller is ""), and an
// interrupt of a thread that is gone is dropped: it cannot be resumed.
// Format-1 keys start with an agent name, never with NUL, so they and the
// principal buckets never collide while both are in a bucket.
func migrateFormat1(tx *bbolt.Tx) error {
	threads, journal, interrupts := tx.Bucket(bucketThreads), tx.Bucket(bucketJournal), tx.Bucket(bucketInterrupts)
	owner := map[string]string{} // format-1 key → its record's principal
	for _, k := range format1Keys(threads, false) {
		v := bytes.Clone(threads.Get(k))
		var rec struct {
			Principal string `json:"principal"`
		}
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode thread %q: %w", k, err)
		}
		dst, err := principalIn(threads, rec.Principal, true)
		if err != nil {
			return err
		}
		if err := dst.Put(k, v); err != nil {
			return err
		}
		if err := threads.Delete(k); err != nil {
			return err
		}
		owner[string(k)] = rec.Principal
	}
	for _, k := range format1Keys(journal, true) {
		dst, err := principalIn(journal, owner[string(k)], true)
		if err != nil {
			return err
		}
		if err := journal.MoveBucket(k, dst); err != nil {
			return fmt.Errorf("journal %q: %w", k, err)
		}
	}
	for _, id := range format1Keys(interrupts, false) {
		thread := bytes.Clone(interrupts.Get(id))
		if err := interrupts.Delete(id); err != nil {
			return err
		}
		principal, ok := owner[string(thread)]
		if !ok {
			continue
		}
		dst, err := principalIn(interrupts, principal, true)
		if err != nil {
			return err
		}
		if err := dst.Put(id, thread); err != nil {
			return err
		}
	}
	return nil
}

// format1Keys lists (copied) the format-1 keys of b: its buckets when
// buckets is set, else its values; principal buckets are not format 1.
func format1Keys(b *bbolt.Bucket, buckets bool) [][]byte {
	var keys [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) > 0 && k[0] != 0 && (v == nil) == buckets {
			keys = append(keys, bytes.Clone(k))
		}
	}
	return keys
}

func seqKey(seq int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(seq))
}

// lastSeqIn is the journal's last seq; j may be nil (no journal yet).
func lastSeqIn(j *bbolt.Bucket) (int64, error) {
	if j == nil {
		return 0, nil
	}
	k, _ := j.Cursor().Last()
	if k == nil {
		return 0, nil
	}
	if len(k) != 8 {
		return 0, fmt.Errorf("journal key %x is not an 8-byte seq", k)
	}
	return int64(binary.BigEndian.Uint64(k)), nil
}

// storedVersion is the version of the thread stored under k, 0 if none.
func storedVersion(threads *bbolt.Bucket, k []byte) (int64, error) {
	v := threads.Get(k)
	if v == nil {
		return 0, nil
	}
	var rec struct {
		Version int64 `json:"version"`
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		return 0, fmt.Errorf("decode thread: %w", err)
	}
	return rec.Version, nil
}

// GetThread implements Store.
func (s *BoltStore) GetThread(ctx context.Context, key ThreadKey) (*Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var th *Thread
	err := s.db.View(func(tx *bbolt.Tx) error {
		threads, _ := principalIn(tx.Bucket(bucketThreads), key.Principal, false)
		if threads == nil {
			return nil
		}
		v := threads.Get(boltKey(key))
		if v == nil {
			return nil
		}
		th = new(Thread)
		return json.Unmarshal(v, th) // copies out of the mmap before the tx ends
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: get thread %s: %w", key, err)
	}
	if th == nil {
		return nil, ErrNotFound
	}
	th.Key = key
	th.Upgrade()
	return th, nil
}

// PutThread implements Store.
func (s *BoltStore) PutThread(ctx context.Context, th *Thread) (int64, error) {
	return s.PutThreadAndAppend(ctx, th)
}

// PutThreadAndAppend implements Store: one bbolt transaction.
func (s *BoltStore) PutThreadAndAppend(ctx context.Context, th *Thread, entries ...Entry) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// The new version is known before the transaction (it succeeds only
	// if the stored one is th.Version), so encode outside bbolt's single
	// writer lock.
	rec := *th
	store.Stamp(&rec, time.Now())
	rec.Version = th.Version + 1
	v, err := json.Marshal(&rec)
	if err != nil {
		return 0, fmt.Errorf("tasks: put thread %s: %w", th.Key, err)
	}
	vals := encodeEntries(entries)
	k := boltKey(th.Key)
	err = s.update(func(tx *bbolt.Tx) error {
		threads, err := principalIn(tx.Bucket(bucketThreads), th.Key.Principal, true)
		if err != nil {
			return err
		}
		cur, err := storedVersion(threads, k)
		if err != nil {
			return err
		}
		if cur != th.Version {
			return ErrConflict
		}
		if err := appendIn(tx, th.Key, entries, vals); err != nil {
			return err
		}
		if err := indexThread(tx, &rec, rec.Version); err != nil {
			return err
		}
		return threads.Put(k, v)
	})
	if errors.Is(err, ErrConflict) {
		return 0, ErrConflict
	}
	if err != nil {
		return 0, fmt.Errorf("tasks: put thread %s: %w", th.Key, err)
	}
	if len(entries) > 0 {
		s.notify(th.Key)
	}
	return rec.Version, nil
}

// ActiveThreads implements Store. It reads every thread record, which is
// what a bridge does once at start.
func (s *BoltStore) ActiveThreads(ctx context.Context) ([]ThreadKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []ThreadKey
	err := s.db.View(func(tx *bbolt.Tx) error {
		return forEachThread(tx, func(key ThreadKey, v []byte) error {
			var rec struct {
				ActiveRunID string `json:"activeRunId"`
			}
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode thread %v: %w", key, err)
			}
			if rec.ActiveRunID != "" {
				out = append(out, key)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: active threads: %w", err)
	}
	return out, nil
}

// PendingInterrupts returns the threads holding pending interrupts and how
// many each holds (Observed.CountInterrupts seeds its count with it).
// Like ActiveThreads it reads every thread record, once, at start.
func (s *BoltStore) PendingInterrupts(ctx context.Context) (map[ThreadKey]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(map[ThreadKey]int)
	err := s.db.View(func(tx *bbolt.Tx) error {
		return forEachThread(tx, func(key ThreadKey, v []byte) error {
			var rec struct {
				Interrupts []json.RawMessage `json:"interrupts"`
			}
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decode thread %v: %w", key, err)
			}
			if len(rec.Interrupts) > 0 {
				out[key] = len(rec.Interrupts)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: pending interrupts: %w", err)
	}
	return out, nil
}

// forEachThread calls fn with every thread record of every principal.
func forEachThread(tx *bbolt.Tx, fn func(key ThreadKey, v []byte) error) error {
	return forEachPrincipal(tx.Bucket(bucketThreads), func(principal string, b *bbolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			key, err := parseBoltKey(principal, k)
			if err != nil {
				return err
			}
			return fn(key, v)
		})
	})
}

// DeleteThread implements Store.
func (s *BoltStore) DeleteThread(ctx context.Context, key ThreadKey, version int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := boltKey(key)
	err := s.update(func(tx *bbolt.Tx) error {
		threads, _ := principalIn(tx.Bucket(bucketThreads), key.Principal, false)
		if threads == nil || threads.Get(k) == nil {
			return ErrNotFound
		}
		cur, err := storedVersion(threads, k)
		if err != nil {
			return err
		}
		if cur != version {
			return ErrConflict
		}
		if err := unindexThread(tx, key); err != nil {
			return err
		}
		return threads.Delete(k)
	})
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		return err
	}
	if err != nil {
		return fmt.Errorf("tasks: delete thread %s: %w", key, err)
	}
	return nil
}

// Append implements Store. Appends to any threads that arrive while a
// commit is in flight are committed together in the next one (group
// commit): one transaction and one fsync serve every run streaming at that
// moment, instead of each run paying its own. The next commit starts as
// soon as the previous one ends, with no delay to gather more, so a lone
// append costs what it did before grouping. Append returns only once the
// commit holding its entries returned: the caller shows them to no client
// earlier, so a crash takes back nothing a client saw.
func (s *BoltStore) Append(ctx context.Context, key ThreadKey, entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &appendRequest{key: key, entries: entries, vals: encodeEntries(entries), done: make(chan error, 1)}
	s.groups.Add(req)
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		// The append may still commit: the caller cannot tell, as with
		// any write whose answer was lost.
		return ctx.Err()
	}
}

// appendRequest is one Append waiting for a group commit.
type appendRequest struct {
	key     ThreadKey
	entries []Entry
	vals    [][]byte
	done    chan error
}

// commitGroup commits a group of appends in one transaction (the groups'
// Write). An append whose numbering conflicts fails alone.
func (s *BoltStore) commitGroup(group []*appendRequest) {
	failed := make([]error, len(group))
	err := s.update(func(tx *bbolt.Tx) error {
		for i, r := range group {
			failed[i] = appendIn(tx, r.key, r.entries, r.vals)
			if failed[i] != nil && !errors.Is(failed[i], ErrConflict) {
				return failed[i]
			}
		}
		return nil
	})
	for i, r := range group {
		switch {
		case err != nil:
			r.done <- fmt.Errorf("tasks: append to journal %s: %w", r.key, err)
		case failed[i] != nil:
			r.done <- failed[i]
		default:
			s.notify(r.key) // after the commit, so a woken Wait finds the entries
			r.done <- nil
		}
	}
}

func encodeEntries(entries []Entry) [][]byte {
	vals := make([][]byte, len(entries))
	for i, e := range entries {
		vals[i] = encodeEntry(e)
	}
	return vals
}

// appendIn puts encoded entries in the journal of key in tx under their
// seqs, or fails with ErrConflict (having written nothing) when the
// numbering does not continue the journal.
func appendIn(tx *bbolt.Tx, key ThreadKey, entries []Entry, vals [][]byte) error {
	if len(entries) == 0 {
		return nil
	}
	p, err := principalIn(tx.Bucket(bucketJournal), key.Principal, true)
	if err != nil {
		return err
	}
	j, err := p.CreateBucketIfNotExists(boltKey(key))
	if err != nil {
		return err
	}
	// Keys only ever grow, so fill pages completely instead of leaving
	// room for inserts that never come.
	j.FillPercent = 1
	last, err := lastSeqIn(j)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Seq <= last {
			return ErrConflict
		}
		last = e.Seq
	}
	for i, e := range entries {
		if err := j.Put(seqKey(e.Seq), vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// TrimJournal implements Store.
func (s *BoltStore) TrimJournal(ctx context.Context, key ThreadKey, upTo int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.update(func(tx *bbolt.Tx) error {
		j := journalOf(tx, key)
		if j == nil {
			return nil
		}
		last, err := lastSeqIn(j)
		if err != nil {
			return err
		}
		end := seqKey(min(upTo, last-1))
		c := j.Cursor()
		// Deleting moves the cursor on to the next key: take First again.
		for k, _ := c.First(); k != nil && bytes.Compare(k, end) <= 0; k, _ = c.First() {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tasks: trim journal %s: %w", key, err)
	}
	return nil
}

// Read implements Store.
func (s *BoltStore) Read(ctx context.Context, key ThreadKey, after int64, limit int) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if after < 0 {
		after = 0
	}
	var out []Entry
	err := s.db.View(func(tx *bbolt.Tx) error {
		j := journalOf(tx, key)
		if j == nil {
			return nil
		}
		c := j.Cursor()
		for k, v := c.Seek(seqKey(after + 1)); k != nil; k, v = c.Next() {
			if limit > 0 && len(out) == limit {
				break
			}
			if len(k) != 8 {
				return fmt.Errorf("journal key %x is not an 8-byte seq", k)
			}
			e, err := decodeEntry(v) // copies: nothing returned points into the mmap
			if err != nil {
				return fmt.Errorf("decode entry %x: %w", k, err)
			}
			e.Seq = int64(binary.BigEndian.Uint64(k))
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: read journal %s: %w", key, err)
	}
	return out, nil
}

// LastSeq implements Store.
func (s *BoltStore) LastSeq(ctx context.Context, key ThreadKey) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var last int64
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		last, err = lastSeqIn(journalOf(tx, key))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("tasks: last seq of journal %s: %w", key, err)
	}
	return last, nil
}

// Wait implements Store. Only Appends through this BoltStore wake it (see
// BoltStore). Close ends it with an error.
func (s *BoltStore) Wait(ctx context.Context, key ThreadKey, after int64) error {
	for {
		// Subscribe before looking, so an Append that commits after the
		// look closes the channel already held.
		ch, release, err := s.subscribe(key)
		if err != nil {
			return err
		}
		last, err := s.LastSeq(ctx, key)
		if err == nil && store.JournalGone(last, after) {
			err = ErrNotFound // purged
		}
		if err != nil || last > after {
			release()
			return err
		}
		select {
		case <-ch:
			// Woken by an Append; loop to check it reached past after.
			release()
		case <-s.done:
			release()
			return s.closedError()
		case <-ctx.Done():
			release()
			return ctx.Err()
		}
	}
}

// subscribe returns the channel the key's next Append closes, and the
// function to call when no longer waiting on it.
func (s *BoltStore) subscribe(key ThreadKey) (<-chan struct{}, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, s.closedError()
	}
	w := s.waiters[key]
	if w == nil {
		w = &boltWaiters{ch: make(chan struct{})}
		s.waiters[key] = w
	}
	w.n++
	return w.ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		// The map holds only keys with a Wait in progress, so it stays as
		// small as the number of tailing clients.
		if w.n--; w.n == 0 && s.waiters[key] == w {
			delete(s.waiters, key)
		}
	}, nil
}

func (s *BoltStore) notify(key ThreadKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.waiters[key]; w != nil {
		close(w.ch)
		delete(s.waiters, key)
	}
}

func (s *BoltStore) closedError() error {
	return fmt.Errorf("tasks: bolt store %s: %w", s.path, bolterrors.ErrDatabaseNotOpen)
}

// IndexInterrupt implements Store.
func (s *BoltStore) IndexInterrupt(ctx context.Context, id string, key ThreadKey) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.update(func(tx *bbolt.Tx) error {
		b, err := principalIn(tx.Bucket(bucketInterrupts), key.Principal, true)
		if err != nil {
			return err
		}
		return b.Put([]byte(id), boltKey(key))
	})
	if err != nil {
		return fmt.Errorf("tasks: index interrupt %s: %w", id, err)
	}
	return nil
}

// InterruptThread implements Store.
func (s *BoltStore) InterruptThread(ctx context.Context, principal, id string) (ThreadKey, error) {
	if err := ctx.Err(); err != nil {
		return ThreadKey{}, err
	}
	var key ThreadKey
	found := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		b, _ := principalIn(tx.Bucket(bucketInterrupts), principal, false)
		if b == nil {
			return nil
		}
		v := b.Get([]byte(id))
		if v == nil {
			return nil
		}
		var err error
		key, err = parseBoltKey(principal, v)
		found = err == nil
		return err
	})
	if err != nil {
		return ThreadKey{}, fmt.Errorf("tasks: interrupt %s: %w", id, err)
	}
	if !found {
		return ThreadKey{}, ErrNotFound
	}
	return key, nil
}

// update runs a write transaction and remembers how it went (writeErr).
// ErrConflict and ErrNotFound are answers, not failures: the transaction
// wrote nothing and says nothing about the disk.
func (s *BoltStore) update(fn func(*bbolt.Tx) error) error {
	err := s.db.Update(fn)
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
		return err
	}
	s.writeMu.Lock()
	s.writeErr = err
	s.writeMu.Unlock()
	return err
}

// probeSize is what Ping writes beside the file while writes fail: about
// a group commit of a busy moment, so a disk with a few free blocks does
// not pass for one that can take the runs' journals again.
const probeSize = 64 << 10

// Ping implements Store. It reads the file; and while the last write
// failed it probes whether writes work again — probeSize bytes written
// and synced in a file beside the store, then a write transaction — so
// that readiness turns back to ready once space is freed or the file
// is writable again, even if no run writes meanwhile.
func (s *BoltStore) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketThreads) == nil || tx.Bucket(bucketJournal) == nil {
			return errors.New("buckets missing")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tasks: ping bolt store %s: %w", s.path, err)
	}
	s.writeMu.Lock()
	failing := s.writeErr != nil
	s.writeMu.Unlock()
	if !failing {
		return nil
	}
	if err := s.probe(); err != nil {
		return fmt.Errorf("tasks: bolt store %s cannot take writes: %w", s.path, err)
	}
	return nil
}

// probe tries a write beside the file and one in it; the second records
// its outcome in writeErr as every write does.
func (s *BoltStore) probe() error {
	name := s.path + ".probe"
	err := func() error {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Write(make([]byte, probeSize)); err != nil {
			return err
		}
		return f.Sync()
	}()
	_ = os.Remove(name)
	if err != nil {
		s.writeMu.Lock()
		s.writeErr = err
		s.writeMu.Unlock()
		return err
	}
	return s.update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyProbe, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
	})
}

// Close ends every Wait and closes the file, after bbolt lets running
// transactions finish. Calling it again does nothing.
func (s *BoltStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("tasks: close bolt store %s: %w", s.path, err)
	}
	return nil
}
