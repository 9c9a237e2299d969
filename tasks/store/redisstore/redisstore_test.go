package redisstore_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/store/redisstore"
	"github.com/a2a-agui-bridge/bridge/tasks/store/storetest"
)

// redisURLEnv names a Redis the tests use instead of starting their own;
// every store they open there gets a random key prefix, deleted after.
const redisURLEnv = "BRIDGE_TEST_REDIS_URL"

// testRedis is the package's one redis-server, started by the first test
// that needs it and stopped by TestMain.
var testRedis struct {
	once sync.Once
	url  string
	err  error
	stop func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testRedis.stop != nil {
		testRedis.stop()
	}
	os.Exit(code)
}

// redisURL is the Redis the tests use. Without redis-server the Redis tests
// fail rather than skip: a skipped store test looks like a passing one.
func redisURL(t testing.TB) string {
	t.Helper()
	testRedis.once.Do(func() {
		if u := os.Getenv(redisURLEnv); u != "" {
			testRedis.url = u
			return
		}
		testRedis.url, testRedis.stop, testRedis.err = startRedisServer()
	})
	if testRedis.err != nil {
		t.Fatal(testRedis.err)
	}
	return testRedis.url
}

// startRedisServer starts a redis-server with no persistence on a free
// loopback port, in a temporary directory.
func startRedisServer() (string, func(), error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, fmt.Errorf("redis-server is not on PATH (%w). The Redis store tests start their own: "+
			"install it with `apt-get install redis-server` (`make test` does), or set %s to a Redis they may use", err, redisURLEnv)
	}
	dir, err := os.MkdirTemp("", "bridge-redis-test-")
	if err != nil {
		return "", nil, err
	}
	var errs []error
	// A port found free can be taken before the server binds it: try again.
	for range 3 {
		url, stop, err := runRedisServer(bin, dir)
		if err == nil {
			return url, func() { stop(); os.RemoveAll(dir) }, nil
		}
		errs = append(errs, err)
	}
	os.RemoveAll(dir)
	return "", nil, errors.Join(errs...)
}

func runRedisServer(bin, dir string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no")
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start redis-server: %w", err)
	}
	// Redis logs this line once it accepts connections: reading its log
	// tells when it is up, with no polling interval to guess. (Every store
	// the tests open then PINGs it.)
	var log strings.Builder
	sc := bufio.NewScanner(out)
	ready := false
	for !ready && sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		ready = strings.Contains(sc.Text(), "Ready to accept connections")
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.Copy(io.Discard, out) // the server blocks on a full pipe
	}()
	stop := func() {
		cmd.Process.Kill()
		<-drained
		cmd.Wait()
	}
	if !ready {
		stop()
		return "", nil, fmt.Errorf("redis-server on port %s stopped before it was ready:\n%s", port, log.String())
	}
	return "redis://127.0.0.1:" + port + "/0", stop, nil
}

func newPrefix() string { return "bridge-test:" + rand.Text() + ":" }

// openRedis opens a store on the test Redis, by default under a prefix of
// its own, so it starts empty. The test's cleanup closes it.
func openRedis(t testing.TB, opts redisstore.RedisOptions) *redisstore.RedisStore {
	t.Helper()
	url := redisURL(t)
	if opts.Prefix == "" {
		opts.Prefix = newPrefix()
	}
	s, err := redisstore.OpenRedisStore(t.Context(), url, opts)
	if err != nil {
		t.Fatalf("OpenRedisStore: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if os.Getenv(redisURLEnv) != "" {
		// A shared server keeps what a test wrote: delete it.
		t.Cleanup(func() { deletePrefix(t, url, opts.Prefix) })
	}
	return s
}

func deletePrefix(t testing.TB, url, prefix string) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	raw := redis.NewClient(opt)
	defer raw.Close()
	ctx := context.Background() // t.Context is already cancelled in cleanup
	iter := raw.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		raw.Del(ctx, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Errorf("delete test keys under %q: %v", prefix, err)
	}
}

// rawClient reads and writes keys behind the store's back.
func rawClient(t testing.TB, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// waitParked returns once n Waits on s are blocked on its XREADs (past
// their own look at the journal), so an Append that follows can only
// reach them through Redis. The deadline turns a Wait that never parks
// into a failure instead of a hang.
func waitParked(t *testing.T, s *redisstore.RedisStore, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for redisstore.RedisParkedWaits(s) != n {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%d Waits parked, want %d", redisstore.RedisParkedWaits(s), n)
		}
	}
}

func TestRedisStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openRedis(t, redisstore.RedisOptions{}) })
}

// TestRedisInstancesShare is two bridge processes on one Redis: each sees
// the other's threads, versions, interrupts and active runs, and a Wait in
// one wakes on an Append in the other. A store under another prefix sees
// none of it.
func TestRedisInstancesShare(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prefix := newPrefix()
	a := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	b := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	other := openRedis(t, redisstore.RedisOptions{})
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}

	th := &store.Thread{Key: k, ContextID: "ctx-1", ActiveRunID: "run-1", Owner: "instance-a"}
	v, err := a.PutThread(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.GetThread(ctx, k)
	if err != nil || got.Key != k || got.ContextID != "ctx-1" || got.Version != v {
		t.Fatalf("b.GetThread = %+v, %v; want a's thread at version %d", got, err, v)
	}
	got.TaskState = "working"
	if _, err := b.PutThread(ctx, got); err != nil {
		t.Fatalf("b.PutThread: %v", err)
	}
	th.Version = v
	if _, err := a.PutThread(ctx, th); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a.PutThread after b's update: error = %v, want ErrConflict", err)
	}
	if active, err := b.ActiveThreads(ctx); err != nil || !cmp.Equal(active, []store.ThreadKey{k}) {
		t.Errorf("b.ActiveThreads = %v, %v; want [%v]", active, err, k)
	}
	if err := a.IndexInterrupt(ctx, "int-1", k); err != nil {
		t.Fatal(err)
	}
	if got, err := b.InterruptThread(ctx, "int-1"); err != nil || got != k {
		t.Errorf("b.InterruptThread = %v, %v; want %v", got, err, k)
	}

	if _, err := other.GetThread(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetThread under another prefix: error = %v, want ErrNotFound", err)
	}
	if active, err := other.ActiveThreads(ctx); err != nil || len(active) != 0 {
		t.Errorf("ActiveThreads under another prefix = %v, %v; want none", active, err)
	}
	if _, err := other.InterruptThread(ctx, "int-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("InterruptThread under another prefix: error = %v, want ErrNotFound", err)
	}

	if err := a.Append(ctx, k, store.Entry{Seq: 1, RunID: "run-1", Event: []byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- b.Wait(ctx, k, 1) }()
	waitParked(t, b, 1)
	if err := a.Append(ctx, k, store.Entry{Seq: 2, RunID: "run-1", Event: []byte(`{"n":2}`), Terminal: true}); err != nil {
		t.Fatalf("a.Append: %v", err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("b.Wait after a.Append: %v", err)
	}
	es, err := b.Read(ctx, k, 1, 10)
	want := []store.Entry{{Seq: 2, RunID: "run-1", Event: []byte(`{"n":2}`), Terminal: true}}
	if err != nil || !cmp.Equal(want, es) {
		t.Errorf("b.Read(after 1) = %+v, %v; want %+v", es, err, want)
	}
	if n, err := other.LastSeq(ctx, k); err != nil || n != 0 {
		t.Errorf("LastSeq under another prefix = %d, %v; want 0", n, err)
	}
}

// TestRedisPutAndAppendConflict: a stale PutThreadAndAppend from another
// instance writes nothing — not the record, not the active set, not one
// entry — and a current one writes all of it.
func TestRedisPutAndAppendConflict(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prefix := newPrefix()
	a := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	b := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
	v, err := a.PutThread(ctx, &store.Thread{Key: k, ActiveRunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, k, store.Entry{Seq: 1, RunID: "run-1", Event: []byte(`{"n":1}`)},
		store.Entry{Seq: 2, RunID: "run-1", Event: []byte(`{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
	before, err := a.GetThread(ctx, k)
	if err != nil {
		t.Fatal(err)
	}

	finish := []store.Entry{{Seq: 3, RunID: "run-1", Event: []byte(`{"type":"RUN_FINISHED"}`), Terminal: true}}
	for _, stale := range []int64{0, v + 1} {
		if _, err := b.PutThreadAndAppend(ctx, &store.Thread{Key: k, Version: stale, TaskState: "stale"}, finish...); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("PutThreadAndAppend(version %d) with stored version %d: error = %v, want ErrConflict", stale, v, err)
		}
	}
	after, err := a.GetThread(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("a rejected PutThreadAndAppend changed the thread (-before +after):\n%s", diff)
	}
	if n, err := a.LastSeq(ctx, k); err != nil || n != 2 {
		t.Errorf("LastSeq after rejected PutThreadAndAppend = %d, %v; want 2", n, err)
	}
	if active, err := a.ActiveThreads(ctx); err != nil || !cmp.Equal(active, []store.ThreadKey{k}) {
		t.Errorf("ActiveThreads after rejected PutThreadAndAppend = %v, %v; want [%v]", active, err, k)
	}

	// The current version ends the run: released and journaled together.
	before.ActiveRunID = ""
	if nv, err := b.PutThreadAndAppend(ctx, before, finish...); err != nil || nv != v+1 {
		t.Fatalf("PutThreadAndAppend(version %d) = %d, %v; want %d", v, nv, err, v+1)
	}
	if es, err := a.Read(ctx, k, 2, 10); err != nil || len(es) != 1 || es[0].Seq != 3 || !es[0].Terminal {
		t.Errorf("journal after PutThreadAndAppend: %+v, %v; want the terminal entry at seq 3", es, err)
	}
	if active, err := a.ActiveThreads(ctx); err != nil || len(active) != 0 {
		t.Errorf("ActiveThreads after the run ended = %v, %v; want none", active, err)
	}
}

// TestRedisManyWaiters parks thousands of Waits, several per journal, on
// one store, then appends through another store: every Wait is woken,
// through Redis. With MaxWaitConns 2 the journals overflow the connections
// and share the two XREADs.
func TestRedisManyWaiters(t *testing.T) {
	t.Parallel()
	for _, maxConns := range []int{0, 2} {
		t.Run(fmt.Sprint("MaxWaitConns=", maxConns), func(t *testing.T) {
			t.Parallel()
			const journals, perJournal = 250, 8
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			prefix := newPrefix()
			waiting := openRedis(t, redisstore.RedisOptions{Prefix: prefix, MaxWaitConns: maxConns})
			writer := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
			key := func(i int) store.ThreadKey { return store.ThreadKey{Agent: "agent", ThreadID: fmt.Sprint("t-", i)} }

			var wg sync.WaitGroup
			errs := make(chan error, journals*perJournal)
			for i := range journals {
				for range perJournal {
					wg.Go(func() {
						if err := waiting.Wait(ctx, key(i), 0); err != nil {
							errs <- fmt.Errorf("Wait(%v): %w", key(i), err)
						}
					})
				}
			}
			waitParked(t, waiting, journals*perJournal)
			for i := range journals {
				if err := writer.Append(ctx, key(i), store.Entry{Seq: 1, RunID: "run-1", Event: []byte(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// TestRedisAfterClose: Close ends a Wait in progress with an error, and
// the store refuses work after it.
func TestRedisAfterClose(t *testing.T) {
	t.Parallel()
	s := openRedis(t, redisstore.RedisOptions{})
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
	waited := make(chan error, 1)
	go func() { waited <- s.Wait(t.Context(), k, 0) }()
	waitParked(t, s, 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; !errors.Is(err, redis.ErrClosed) {
		t.Errorf("Wait across Close: error = %v, want one wrapping redis.ErrClosed", err)
	}
	if err := s.Wait(t.Context(), k, 0); !errors.Is(err, redis.ErrClosed) {
		t.Errorf("Wait after Close: error = %v, want one wrapping redis.ErrClosed", err)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping after Close succeeded")
	}
	if err := s.Append(t.Context(), k, store.Entry{Seq: 1, Event: []byte(`{}`)}); err == nil {
		t.Error("Append after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestRedisKeyLayout pins the storage format described on RedisStore, which
// bridges of different builds sharing one Redis must agree on.
func TestRedisKeyLayout(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prefix := newPrefix()
	s := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	raw := rawClient(t, redisURL(t))
	k := store.ThreadKey{Agent: "agent", ThreadID: "t/1\x00é"}
	if _, err := s.PutThread(ctx, &store.Thread{Key: k, ContextID: "ctx-1", ActiveRunID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, k, store.Entry{Seq: 1, RunID: "run-1", Event: []byte(` {"type": "A"} `)},
		store.Entry{Seq: 2, RunID: "run-1", Event: []byte(`{"type":"RUN_FINISHED"}`), Terminal: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.IndexInterrupt(ctx, "int-1", k); err != nil {
		t.Fatal(err)
	}

	tag := prefix + "{agent\x00dC8xAMOp}" // base64url("t/1\x00é"), unpadded
	rec, err := raw.HGetAll(ctx, tag+":thread").Result()
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	if err := json.Unmarshal([]byte(rec["thread"]), &stored); err != nil {
		t.Fatalf("thread field %q: %v", rec["thread"], err)
	}
	if rec["version"] != "1" || stored["contextId"] != "ctx-1" || stored["activeRunId"] != "run-1" || stored["version"] != 1.0 {
		t.Errorf("thread hash = %q, want version 1 and the Thread's JSON", rec)
	}
	msgs, err := raw.XRange(ctx, tag+":journal", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := []redis.XMessage{
		{ID: "1-1", Values: map[string]any{"run": "run-1", "terminal": "0", "event": ` {"type": "A"} `}},
		{ID: "2-1", Values: map[string]any{"run": "run-1", "terminal": "1", "event": `{"type":"RUN_FINISHED"}`}},
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("journal stream (-want +got):\n%s", diff)
	}
	if ok, err := raw.SIsMember(ctx, prefix+"active", "agent\x00t/1\x00é").Result(); err != nil || !ok {
		t.Errorf("active set membership = %v, %v; want true", ok, err)
	}
	if m, err := raw.HGet(ctx, prefix+"interrupts", "int-1").Result(); err != nil || m != "agent\x00t/1\x00é" {
		t.Errorf("interrupt index = %q, %v; want the thread's key", m, err)
	}

	// Entries another writer appended in the same layout read back alike.
	if err := raw.XAdd(ctx, &redis.XAddArgs{Stream: tag + ":journal", ID: "3-1",
		Values: []string{"run", "run-2", "terminal", "0", "event", "{}"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, k, store.Entry{Seq: 3, RunID: "run-2", Event: []byte(`{}`)}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Append of seq 3 after a raw entry 3: %v, want ErrConflict", err)
	}
	if err := s.Append(ctx, k, store.Entry{Seq: 4, RunID: "run-2", Event: []byte(`{}`)}); err != nil {
		t.Errorf("Append of seq 4 after a raw entry 3: %v", err)
	}
}

// TestRedisJournalNotOurs: a stream with ids that are not sequence numbers
// is refused, not renumbered or misread.
func TestRedisJournalNotOurs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prefix := newPrefix()
	s := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
	if err := rawClient(t, redisURL(t)).XAdd(ctx, &redis.XAddArgs{Stream: prefix + "{agent\x00dA}:journal",
		Values: []string{"event", "{}"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, k, store.Entry{Seq: 1, Event: []byte(`{}`)}); err == nil {
		t.Error("Append to a stream with a time-based id succeeded")
	}
	if _, err := s.LastSeq(ctx, k); err == nil {
		t.Error("LastSeq of a stream with a time-based id succeeded")
	}
	if _, err := s.Read(ctx, k, 0, 10); err == nil {
		t.Error("Read of a stream with a time-based id succeeded")
	}
}

// TestRedisOpenUnreachable: a bridge started against a Redis that is not
// there fails at once, naming the address but never the password.
func TestRedisOpenUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, url := range []string{"redis://:s3cret@" + addr + "/0", "redis://:s3cret@host:port/0", "http://:s3cret@" + addr} {
		s, err := redisstore.OpenRedisStore(t.Context(), url, redisstore.RedisOptions{})
		if err == nil {
			s.Close()
			t.Errorf("OpenRedisStore(%s) succeeded", url)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("OpenRedisStore error shows the password: %v", err)
		}
	}
	if _, err := redisstore.OpenRedisStore(t.Context(), "redis://:s3cret@"+addr+"/0", redisstore.RedisOptions{}); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("OpenRedisStore of an unreachable server: error = %v, want one naming %s", err, addr)
	}
}

// BenchmarkRedisAppend appends batches of 200-byte events to one journal,
// each batch one script call and so one round trip to the test's local
// redis-server. Compare ns/entry with BenchmarkBoltAppend (one entry per
// fsynced commit).
func BenchmarkRedisAppend(b *testing.B) {
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			s := openRedis(b, redisstore.RedisOptions{})
			k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
			es := make([]store.Entry, batch)
			for i := range es {
				es[i] = store.Entry{RunID: "run-1", Event: storetest.BenchEvent}
			}
			seq := int64(0)
			b.SetBytes(int64(batch * len(storetest.BenchEvent)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				for i := range es {
					seq++
					es[i].Seq = seq
				}
				if err := s.Append(b.Context(), k, es...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*batch), "ns/entry")
		})
	}
}

// TestRedisLapsedLeases: the leases sorted set follows the records' active
// runs and lease expiries, so the adoption scan lists exactly the runs
// whose lease lapsed: not a live lease, not a run without a lease, not a
// released or deleted thread.
func TestRedisLapsedLeases(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openRedis(t, redisstore.RedisOptions{})
	now := time.Now()
	put := func(id string, active bool, expires time.Time) *store.Thread {
		t.Helper()
		th := &store.Thread{Key: store.ThreadKey{Agent: "a", ThreadID: id}, LeaseExpires: expires}
		if active {
			th.ActiveRunID, th.Owner = "run-"+id, "A"
		}
		v, err := s.PutThread(ctx, th)
		if err != nil {
			t.Fatal(err)
		}
		th.Version = v
		return th
	}
	lapsed := put("lapsed", true, now.Add(-time.Second))
	put("live", true, now.Add(time.Minute))
	put("nolease", true, time.Time{})
	put("idle", false, time.Time{})
	gone := put("deleted", true, now.Add(-time.Second))
	if err := s.DeleteThread(ctx, gone.Key, gone.Version); err != nil {
		t.Fatal(err)
	}
	released := put("released", true, now.Add(-time.Second))
	released.ActiveRunID, released.Owner, released.LeaseExpires = "", "", time.Time{}
	if _, err := s.PutThread(ctx, released); err != nil {
		t.Fatal(err)
	}
	got, err := s.LapsedLeases(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.ThreadKey{lapsed.Key}, got); diff != "" {
		t.Errorf("lapsed at now (-want +got):\n%s", diff)
	}
	// Renewing moves the lease out of the lapsed range.
	lapsed.LeaseExpires = now.Add(time.Minute)
	if _, err := s.PutThread(ctx, lapsed); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LapsedLeases(ctx, now); err != nil || len(got) != 0 {
		t.Errorf("after renewal: %v, %v; want none", got, err)
	}
	if got, err := s.LapsedLeases(ctx, now.Add(2*time.Minute)); err != nil || len(got) != 2 {
		t.Errorf("two minutes on: %v, %v; want lapsed and live", got, err)
	}
}
