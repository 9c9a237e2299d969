package redisstore_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/a2a-agui-bridge/bridge/internal/redistest"
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
	stopTestCluster()
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

	th := &store.Thread{Key: k, Members: map[string]*store.MemberRecord{"agent": {ContextID: "ctx-1"}}, Active: &store.ActiveRun{RunID: "run-1", Owner: "instance-a"}}
	v, err := a.PutThread(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.GetThread(ctx, k)
	if err != nil || got.Key != k || got.Own().ContextID != "ctx-1" || got.Version != v {
		t.Fatalf("b.GetThread = %+v, %v; want a's thread at version %d", got, err, v)
	}
	got.Routed = "working"
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
	if got, err := b.InterruptThread(ctx, "", "int-1"); err != nil || got != k {
		t.Errorf("b.InterruptThread = %v, %v; want %v", got, err, k)
	}

	if _, err := other.GetThread(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetThread under another prefix: error = %v, want ErrNotFound", err)
	}
	if active, err := other.ActiveThreads(ctx); err != nil || len(active) != 0 {
		t.Errorf("ActiveThreads under another prefix = %v, %v; want none", active, err)
	}
	if _, err := other.InterruptThread(ctx, "", "int-1"); !errors.Is(err, store.ErrNotFound) {
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
	v, err := a.PutThread(ctx, &store.Thread{Key: k, Active: &store.ActiveRun{RunID: "run-1"}})
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
		if _, err := b.PutThreadAndAppend(ctx, &store.Thread{Key: k, Version: stale, Routed: "stale"}, finish...); !errors.Is(err, store.ErrConflict) {
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
	before.Active = nil
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
	k := store.ThreadKey{Agent: "agent", Principal: "alice", ThreadID: "t/1\x00é"}
	if _, err := s.PutThread(ctx, &store.Thread{Key: k, Members: map[string]*store.MemberRecord{k.Agent: {ContextID: "ctx-1"}}, Active: &store.ActiveRun{RunID: "run-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, k, store.Entry{Seq: 1, RunID: "run-1", Event: []byte(` {"type": "A"} `)},
		store.Entry{Seq: 2, RunID: "run-1", Event: []byte(`{"type":"RUN_FINISHED"}`), Terminal: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.IndexInterrupt(ctx, "int-1", k); err != nil {
		t.Fatal(err)
	}

	// Shard 34: FNV-1a of "agent\x00t/1\x00é" modulo 128 (the principal
	// is not part of it); YWxpY2U and dC8xAMOp: base64url("alice") and
	// base64url("t/1\x00é"), unpadded.
	shard, name := prefix+"{34}", "agent\x00YWxpY2U\x00dC8xAMOp"
	rec, err := raw.HGetAll(ctx, shard+":thread:"+name).Result()
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	if err := json.Unmarshal([]byte(rec["thread"]), &stored); err != nil {
		t.Fatalf("thread field %q: %v", rec["thread"], err)
	}
	member, _ := stored["members"].(map[string]any)["agent"].(map[string]any)
	if rec["version"] != "1" || member["contextId"] != "ctx-1" || stored["activeRunId"] != "run-1" || stored["version"] != 1.0 {
		t.Errorf("thread hash = %q, want version 1 and the Thread's JSON", rec)
	}
	msgs, err := raw.XRange(ctx, shard+":journal:"+name, "-", "+").Result()
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
	if ok, err := raw.SIsMember(ctx, shard+":active", name).Result(); err != nil || !ok {
		t.Errorf("active set membership = %v, %v; want true", ok, err)
	}
	if score, err := raw.ZScore(ctx, shard+":leases", name).Result(); err != nil || !math.IsInf(score, 1) {
		t.Errorf("lease index score = %v, %v; want +inf (a run without a lease)", score, err)
	}
	// Shard 40: FNV-1a of "int-1" modulo 128.
	if m, err := raw.HGet(ctx, prefix+"{40}:interrupts", "YWxpY2U\x00int-1").Result(); err != nil || m != name {
		t.Errorf("interrupt index = %q, %v; want the thread's name", m, err)
	}
	if v, err := raw.Get(ctx, prefix+"layout").Result(); err != nil || v != "3" {
		t.Errorf("layout mark = %q, %v; want 3", v, err)
	}

	// Entries another writer appended in the same layout read back alike.
	if err := raw.XAdd(ctx, &redis.XAddArgs{Stream: shard + ":journal:" + name, ID: "3-1",
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
	// Shard 82: FNV-1a of "agent\x00t" modulo 128; "" and dA:
	// base64url of the principal ("") and of "t".
	if err := rawClient(t, redisURL(t)).XAdd(ctx, &redis.XAddArgs{Stream: prefix + "{82}:journal:agent\x00\x00dA",
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
		// Each thread is alice's: the scan must give the principal back,
		// or the adopting instance would look for the run under "".
		th := &store.Thread{Key: store.ThreadKey{Agent: "a", Principal: "alice", ThreadID: id}, Principal: "alice"}
		if active {
			th.Active = &store.ActiveRun{RunID: "run-" + id, Owner: "A", LeaseExpires: expires}
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
	released.Active = nil
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
	lapsed.Active.LeaseExpires = now.Add(time.Minute)
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

// testCluster is the package's one three-primary Redis Cluster, started by
// the first test that needs it and stopped by TestMain.
var testCluster struct {
	once    sync.Once
	cluster *redistest.Cluster
	dir     string
	err     error
}

func clusterAddrs(t testing.TB) []string {
	t.Helper()
	testCluster.once.Do(func() {
		testCluster.dir, testCluster.err = os.MkdirTemp("", "bridge-redis-cluster-")
		if testCluster.err == nil {
			testCluster.cluster, testCluster.err = redistest.StartCluster(context.Background(), testCluster.dir, 3)
		}
	})
	if testCluster.err != nil {
		t.Fatal(testCluster.err)
	}
	return testCluster.cluster.Addrs()
}

func stopTestCluster() {
	if testCluster.cluster != nil {
		testCluster.cluster.Stop()
	}
	if testCluster.dir != "" {
		os.RemoveAll(testCluster.dir)
	}
}

// openCluster opens a store on the test cluster under a prefix of its own.
func openCluster(t testing.TB, opts redisstore.RedisOptions) *redisstore.RedisStore {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = newPrefix()
	}
	s, err := redisstore.OpenRedis(t.Context(), redisstore.RedisTarget{Cluster: clusterAddrs(t)}, opts)
	if err != nil {
		t.Fatalf("OpenRedis(cluster): %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestRedisClusterStore runs the store contract on a three-primary Redis
// Cluster: every script's keys share a slot (a cross-slot script would
// fail with CROSSSLOT), Waits group their journals by slot.
func TestRedisClusterStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openCluster(t, redisstore.RedisOptions{}) })
}

// TestRedisClusterSpreads: a store's threads, journals, lease indexes and
// interrupt index land on every primary, not one slot; the lease scan and
// the active-thread listing read all of them; thousands of Waits over
// journals of every shard wake through per-slot XREADs; two stores on the
// cluster share threads.
func TestRedisClusterSpreads(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prefix := newPrefix()
	a := openCluster(t, redisstore.RedisOptions{Prefix: prefix})
	b := openCluster(t, redisstore.RedisOptions{Prefix: prefix, MaxWaitConns: 2})
	const threads = 300
	key := func(i int) store.ThreadKey { return store.ThreadKey{Agent: "agent", ThreadID: fmt.Sprint("t-", i)} }
	past := time.Now().Add(-time.Second)
	var want []store.ThreadKey
	for i := range threads {
		th := &store.Thread{Key: key(i), Active: &store.ActiveRun{RunID: "run", Owner: "A", LeaseExpires: past}}
		if _, err := a.PutThread(ctx, th); err != nil {
			t.Fatal(err)
		}
		if err := a.IndexInterrupt(ctx, fmt.Sprint("int-", i), key(i)); err != nil {
			t.Fatal(err)
		}
		want = append(want, key(i))
	}
	for _, addr := range clusterAddrs(t) {
		c := redis.NewClient(&redis.Options{Addr: addr})
		n := 0
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			n++
		}
		c.Close()
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		if n < threads/10 {
			t.Errorf("node %s holds %d of the store's keys: the shards do not spread", addr, n)
		}
	}
	sortKeys := func(ks []store.ThreadKey) []store.ThreadKey {
		slices.SortFunc(ks, func(x, y store.ThreadKey) int { return strings.Compare(x.ThreadID, y.ThreadID) })
		return ks
	}
	active, err := b.ActiveThreads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortKeys(slices.Clone(want)), sortKeys(active)); diff != "" {
		t.Errorf("ActiveThreads on the cluster (-want +got):\n%s", diff)
	}
	lapsed, err := b.LapsedLeases(ctx, time.Now())
	if err != nil || len(lapsed) != threads {
		t.Errorf("LapsedLeases on the cluster: %d threads, %v; want %d", len(lapsed), err, threads)
	}
	for i := range threads {
		if got, err := b.InterruptThread(ctx, "", fmt.Sprint("int-", i)); err != nil || got != key(i) {
			t.Fatalf("InterruptThread(int-%d) = %v, %v", i, got, err)
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, threads*2)
	for i := range threads {
		for range 2 {
			wg.Go(func() {
				if err := b.Wait(ctx, key(i), 0); err != nil {
					errs <- fmt.Errorf("Wait(%v): %w", key(i), err)
				}
			})
		}
	}
	waitParked(t, b, threads*2)
	for i := range threads {
		if err := a.Append(ctx, key(i), store.Entry{Seq: 1, RunID: "run", Event: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestRedisMigratesLayout1: keys written in the layout of bridges before
// the sharded one (one hash tag per thread, one active set, one lease
// index, one interrupt index) are moved at the first open: the threads,
// their journals, active runs, leases and interrupts read back as they
// were, and the old keys are gone. Opening again finds the mark and moves
// nothing.
func TestRedisMigratesLayout1(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prefix := newPrefix()
	raw := rawClient(t, redisURL(t))
	k := store.ThreadKey{Agent: "agent", ThreadID: "t/1\x00é"}
	member := "agent\x00t/1\x00é"
	oldTag := prefix + "{agent\x00dC8xAMOp}"
	lease := time.Now().Add(-time.Second).UnixMilli()
	th, _ := json.Marshal(&store.Thread{Key: k, Version: 3, Members: map[string]*store.MemberRecord{k.Agent: {ContextID: "ctx-1"}}, Active: &store.ActiveRun{RunID: "run-1", Owner: "A"}})
	for _, err := range []error{
		raw.HSet(ctx, oldTag+":thread", "version", "3", "thread", th).Err(),
		raw.XAdd(ctx, &redis.XAddArgs{Stream: oldTag + ":journal", ID: "1-1", Values: []string{"run", "run-1", "terminal", "0", "event", `{"n":1}`}}).Err(),
		raw.XAdd(ctx, &redis.XAddArgs{Stream: prefix + "{agent\x00ZGVsZXRlZA}:journal", ID: "1-1", Values: []string{"run", "r", "terminal", "1", "event", `{}`}}).Err(),
		raw.SAdd(ctx, prefix+"active", member).Err(),
		raw.ZAdd(ctx, prefix+"leases", redis.Z{Score: float64(lease), Member: member}).Err(),
		raw.HSet(ctx, prefix+"interrupts", "int-1", member).Err(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	got, err := s.GetThread(ctx, k)
	if err != nil || got.Version != 3 || got.Own().ContextID != "ctx-1" || got.Active == nil || got.Active.RunID != "run-1" {
		t.Fatalf("the migrated thread: %+v, %v", got, err)
	}
	if es, err := s.Read(ctx, k, 0, 0); err != nil || len(es) != 1 || string(es[0].Event) != `{"n":1}` {
		t.Errorf("the migrated journal: %+v, %v", es, err)
	}
	// A journal whose thread record was deleted moves too.
	if n, err := s.LastSeq(ctx, store.ThreadKey{Agent: "agent", ThreadID: "deleted"}); err != nil || n != 1 {
		t.Errorf("the journal of a deleted thread: last seq %d, %v; want 1", n, err)
	}
	if active, err := s.ActiveThreads(ctx); err != nil || !cmp.Equal(active, []store.ThreadKey{k}) {
		t.Errorf("ActiveThreads after the migration = %v, %v", active, err)
	}
	if lapsed, err := s.LapsedLeases(ctx, time.Now()); err != nil || !cmp.Equal(lapsed, []store.ThreadKey{k}) {
		t.Errorf("LapsedLeases after the migration = %v, %v", lapsed, err)
	}
	if got, err := s.InterruptThread(ctx, "", "int-1"); err != nil || got != k {
		t.Errorf("InterruptThread after the migration = %v, %v", got, err)
	}
	left, err := raw.Exists(ctx, oldTag+":thread", oldTag+":journal", prefix+"active", prefix+"leases", prefix+"interrupts").Result()
	if err != nil || left != 0 {
		t.Errorf("%d old keys left, %v", left, err)
	}
	// The same thread written in the old layout after the mark is not
	// read: the mark says the migration is done.
	if err := raw.HSet(ctx, oldTag+":thread", "version", "9", "thread", th).Err(); err != nil {
		t.Fatal(err)
	}
	again := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	if got, err := again.GetThread(ctx, k); err != nil || got.Version != 3 {
		t.Errorf("after a second open: %+v, %v; want the migrated thread at version 3", got, err)
	}
	// A layout this version does not know is refused, not overwritten.
	if err := raw.Set(ctx, prefix+"layout", "4", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if s, err := redisstore.OpenRedisStore(ctx, redisURL(t), redisstore.RedisOptions{Prefix: prefix}); err == nil {
		s.Close()
		t.Error("OpenRedisStore on keys of layout 4 succeeded")
	}
}

// shardOf is redisShard, restated: FNV-1a (32-bit) modulo 128.
func shardOf(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return "{" + strconv.Itoa(int(h.Sum32()%128)) + "}"
}

// writeLayout2 writes, behind the store's back, what a bridge of layout 2
// (threads keyed by agent and thread id, the principal only inside the
// record) left: alice's thread with a run whose lease lapsed, its journal
// and an interrupt; an unauthenticated caller's thread; the journal of a
// deleted thread; an interrupt of a thread that is gone; and an active-set
// member without a record.
func writeLayout2(t *testing.T, raw redis.Cmdable, prefix string) {
	t.Helper()
	ctx := t.Context()
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	keys := func(thread string) (tag, name, member string) {
		return prefix + shardOf("agent\x00"+thread), "agent\x00" + b64(thread), "agent\x00" + thread
	}
	lease := time.Now().Add(-time.Second).UnixMilli()
	tag, name, member := keys("t/1\x00é")
	// The records as layout 2 stored them: the principal inside only.
	aliceRec := fmt.Sprintf(`{"contextId":"ctx-alice","principal":"alice","activeRunId":"run-1","owner":"A","leaseExpires":%q,"version":3}`,
		time.UnixMilli(lease).UTC().Format(time.RFC3339Nano))
	anonTag, anonName, anonMember := keys("anon")
	anonRec := `{"contextId":"ctx-anon","version":1}`
	goneTag, goneName, _ := keys("deleted")
	ghostTag, _, ghostMember := keys("ghost")
	_, _, goneMember := keys("gone")
	for _, err := range []error{
		raw.HSet(ctx, tag+":thread:"+name, "version", "3", "thread", aliceRec).Err(),
		raw.XAdd(ctx, &redis.XAddArgs{Stream: tag + ":journal:" + name, ID: "1-1", Values: []string{"run", "run-1", "terminal", "0", "event", `{"n":1}`}}).Err(),
		raw.XAdd(ctx, &redis.XAddArgs{Stream: tag + ":journal:" + name, ID: "2-1", Values: []string{"run", "run-1", "terminal", "0", "event", `{"n":2}`}}).Err(),
		raw.SAdd(ctx, tag+":active", member).Err(),
		raw.ZAdd(ctx, tag+":leases", redis.Z{Score: float64(lease), Member: member}).Err(),
		raw.HSet(ctx, prefix+shardOf("int-alice")+":interrupts", "int-alice", member).Err(),
		raw.HSet(ctx, anonTag+":thread:"+anonName, "version", "1", "thread", anonRec).Err(),
		raw.HSet(ctx, prefix+shardOf("int-anon")+":interrupts", "int-anon", anonMember).Err(),
		raw.XAdd(ctx, &redis.XAddArgs{Stream: goneTag + ":journal:" + goneName, ID: "1-1", Values: []string{"run", "r", "terminal", "1", "event", `{}`}}).Err(),
		raw.HSet(ctx, prefix+shardOf("int-gone")+":interrupts", "int-gone", goneMember).Err(),
		raw.SAdd(ctx, ghostTag+":active", ghostMember).Err(),
		raw.Set(ctx, prefix+"layout", "2", 0).Err(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkLayout2Migrated: after the migration of writeLayout2's keys, each
// thread is its record's principal's and no one else's — its journal,
// active run, lapsed lease and interrupts with it — and nothing of layout
// 2 is left.
func checkLayout2Migrated(t *testing.T, s *redisstore.RedisStore, raw redis.Cmdable, prefix string) {
	t.Helper()
	ctx := t.Context()
	alice := store.ThreadKey{Agent: "agent", Principal: "alice", ThreadID: "t/1\x00é"}
	anon := store.ThreadKey{Agent: "agent", ThreadID: "anon"}
	got, err := s.GetThread(ctx, alice)
	if err != nil || got.Version != 3 || got.Own().ContextID != "ctx-alice" || !got.Running("run-1") || got.Key != alice {
		t.Fatalf("alice's migrated thread: %+v, %v", got, err)
	}
	if es, err := s.Read(ctx, alice, 0, 0); err != nil || len(es) != 2 || string(es[1].Event) != `{"n":2}` {
		t.Errorf("alice's migrated journal: %+v, %v", es, err)
	}
	for _, k := range []store.ThreadKey{
		{Agent: "agent", ThreadID: alice.ThreadID},
		{Agent: "agent", Principal: "bob", ThreadID: alice.ThreadID},
		{Agent: "agent", Principal: "alice", ThreadID: "anon"},
	} {
		if _, err := s.GetThread(ctx, k); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetThread(%#v) after the migration: %v; want ErrNotFound", k, err)
		}
		if n, err := s.LastSeq(ctx, k); err != nil || n != 0 {
			t.Errorf("LastSeq(%#v) after the migration: %d, %v; want an empty journal", k, n, err)
		}
	}
	if got, err := s.GetThread(ctx, anon); err != nil || got.Own().ContextID != "ctx-anon" {
		t.Errorf("the unauthenticated caller's thread: %+v, %v", got, err)
	}
	// A journal whose record was deleted goes to the principal "".
	if n, err := s.LastSeq(ctx, store.ThreadKey{Agent: "agent", ThreadID: "deleted"}); err != nil || n != 1 {
		t.Errorf("the journal of a deleted thread: last seq %d, %v; want 1", n, err)
	}
	if active, err := s.ActiveThreads(ctx); err != nil || !cmp.Equal(active, []store.ThreadKey{alice}) {
		t.Errorf("ActiveThreads after the migration = %#v, %v; want alice's thread", active, err)
	}
	if lapsed, err := s.LapsedLeases(ctx, time.Now()); err != nil || !cmp.Equal(lapsed, []store.ThreadKey{alice}) {
		t.Errorf("LapsedLeases after the migration = %#v, %v; want alice's thread", lapsed, err)
	}
	for _, tc := range []struct {
		principal, id string
		want          store.ThreadKey
	}{
		{"alice", "int-alice", alice},
		{"", "int-anon", anon},
		{"", "int-alice", store.ThreadKey{}},
		{"bob", "int-alice", store.ThreadKey{}},
		{"", "int-gone", store.ThreadKey{}},
	} {
		got, err := s.InterruptThread(ctx, tc.principal, tc.id)
		if tc.want == (store.ThreadKey{}) && !errors.Is(err, store.ErrNotFound) || tc.want != (store.ThreadKey{}) && (err != nil || got != tc.want) {
			t.Errorf("InterruptThread(%q, %s) = %#v, %v; want %#v", tc.principal, tc.id, got, err, tc.want)
		}
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tag := prefix + shardOf("agent\x00t/1\x00é")
	if n, err := raw.Exists(ctx, tag+":thread:agent\x00"+b64(alice.ThreadID), tag+":journal:agent\x00"+b64(alice.ThreadID)).Result(); err != nil || n != 0 {
		t.Errorf("%d layout-2 keys left, %v", n, err)
	}
	for _, id := range []string{"int-alice", "int-anon", "int-gone"} {
		if ok, err := raw.HExists(ctx, prefix+shardOf(id)+":interrupts", id).Result(); err != nil || ok {
			t.Errorf("layout-2 interrupt field %s left: %v, %v", id, ok, err)
		}
	}
	if n, err := raw.SCard(ctx, prefix+shardOf("agent\x00ghost")+":active").Result(); err != nil || n != 0 {
		t.Errorf("the member without a record is left in its active set: %d, %v", n, err)
	}
	if v, err := raw.Get(ctx, prefix+"layout").Result(); err != nil || v != "3" {
		t.Errorf("layout mark = %q, %v; want 3", v, err)
	}
	// The migrated thread goes on as any: its owner's next write.
	got.Active = nil
	if v, err := s.PutThread(ctx, got); err != nil || v != 4 {
		t.Errorf("PutThread on the migrated thread: %d, %v; want version 4", v, err)
	}
}

// TestRedisMigratesLayout2: keys of layout 2, which filed a thread under
// its agent and thread id with the principal only inside the record, are
// moved at the first open under the record's principal, so the thread is
// found by its owner and by nobody else; opening again moves nothing.
func TestRedisMigratesLayout2(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	raw := rawClient(t, redisURL(t))
	writeLayout2(t, raw, prefix)
	s := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	checkLayout2Migrated(t, s, raw, prefix)
	again := openRedis(t, redisstore.RedisOptions{Prefix: prefix})
	if got, err := again.GetThread(t.Context(), store.ThreadKey{Agent: "agent", Principal: "alice", ThreadID: "t/1\x00é"}); err != nil || got.Version != 4 {
		t.Errorf("after a second open: %+v, %v; want alice's thread at version 4", got, err)
	}
}

// TestRedisClusterMigratesLayout2: the same on a Redis Cluster, where
// layout 2 ran too: the keys are found on every primary and each thread
// moves within its slot.
func TestRedisClusterMigratesLayout2(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	raw := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterAddrs(t)})
	t.Cleanup(func() { raw.Close() })
	writeLayout2(t, raw, prefix)
	s := openCluster(t, redisstore.RedisOptions{Prefix: prefix})
	checkLayout2Migrated(t, s, raw, prefix)
}

// TestRedisTargets: the ways to name a Redis deployment, and the errors of
// the wrong ones (never showing a password).
func TestRedisTargets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		want *redisstore.RedisTarget
		err  string
	}{
		{url: "redis://h:6379/0"},
		{url: "redis-sentinel://h1:26379,h2:26379/primary", want: &redisstore.RedisTarget{
			Sentinel: &redisstore.RedisSentinel{Master: "primary", Addrs: []string{"h1:26379", "h2:26379"}}}},
		{url: "rediss-sentinel://u:p%40ss@h1:26379/primary/2", want: &redisstore.RedisTarget{
			Sentinel: &redisstore.RedisSentinel{Master: "primary", Addrs: []string{"h1:26379"}, DB: 2}, Username: "u", Password: "p@ss", TLS: true}},
		{url: "redis-sentinel://:s3cret@h1:26379", err: "names the primary"},
		{url: "redis-sentinel://:s3cret@h1/primary", err: "not host:port"},
		{url: "redis-sentinel://h1:26379/primary/x", err: "not a number"},
		{url: "redis-sentinel://h1:26379/primary?db=1", err: "takes no query"},
	} {
		got, err := redisstore.ParseSentinelURL(tc.url)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: error %v, want one saying %q", tc.url, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.url, err)
		default:
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.url, diff)
			}
		}
	}
	for _, target := range []redisstore.RedisTarget{{}, {URL: "redis://h:1", Cluster: []string{"h:1"}}, {Cluster: []string{}},
		{Sentinel: &redisstore.RedisSentinel{Master: "m"}}} {
		if s, err := redisstore.OpenRedis(t.Context(), target, redisstore.RedisOptions{}); err == nil {
			s.Close()
			t.Errorf("OpenRedis(%+v) succeeded", target)
		}
	}
	if _, err := redisstore.OpenRedis(t.Context(), redisstore.RedisTarget{URL: redisURL(t)}, redisstore.RedisOptions{Prefix: "a{b}:"}); err == nil {
		t.Error("a prefix with braces was accepted")
	}
}

// TestRedisSentinelFailover: a store on a Sentinel-watched primary with two
// replicas (WaitReplicas 1) appends while the primary is SIGKILLed. Appends
// fail while there is no primary, then go on on the promoted replica (its
// remaining replica confirms them);
// every append that was acknowledged is in the journal afterwards, in
// order, with no gap: a failover loses nothing the store confirmed.
func TestRedisSentinelFailover(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	st, err := redistest.StartSentinel(ctx, t.TempDir(), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	url := "redis-sentinel://" + strings.Join(st.SentinelAddrs(), ",") + "/" + st.Master
	s, err := redisstore.OpenRedisStore(ctx, url, redisstore.RedisOptions{Prefix: newPrefix(), WaitReplicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := store.ThreadKey{Agent: "agent", ThreadID: "t"}
	oldPrimary := st.Primary.Addr
	var acked int64
	failures := 0
	killed := false
	var killedAt time.Time
	var outage time.Duration // from the kill to the first append acknowledged after it
	for seq := int64(1); ; {
		err := s.Append(ctx, k, store.Entry{Seq: seq, RunID: "run", Event: fmt.Appendf(nil, `{"n":%d}`, seq)})
		switch {
		case err == nil:
			if killed && outage == 0 {
				outage = time.Since(killedAt)
			}
			acked = seq
			seq++
		case errors.Is(err, store.ErrConflict):
			// The append landed but its reply was lost: the journal has
			// it, the next number follows it.
			acked = seq
			seq++
		default:
			failures++
			if ctx.Err() != nil {
				t.Fatalf("no primary again before the deadline; last error %v", err)
			}
			time.Sleep(20 * time.Millisecond) // the bridge's journal writer backs off likewise
			continue
		}
		if seq == 50 && !killed {
			t.Logf("kill -9 the primary %s after %d appends", oldPrimary, acked)
			st.Primary.Kill()
			killed, killedAt = true, time.Now()
		}
		if killed && failures > 0 && seq > 100 {
			break
		}
		if killed && seq > 5000 {
			t.Fatal("no append failed after the primary was killed: was it the primary?")
		}
	}
	now, err := st.CurrentPrimary(ctx)
	if err != nil || now == oldPrimary {
		t.Fatalf("the Sentinels hold the primary at %s (%v); want the promoted replica", now, err)
	}
	es, err := s.Read(ctx, k, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(es)) < acked {
		t.Fatalf("the journal holds %d entries after the failover, %d were acknowledged", len(es), acked)
	}
	for i, e := range es {
		if e.Seq != int64(i+1) || string(e.Event) != fmt.Sprintf(`{"n":%d}`, i+1) {
			t.Fatalf("entry %d after the failover: %+v", i, e)
		}
	}
	t.Logf("%d appends acknowledged, %d failed while the primary was gone; writes resumed %v after the kill",
		acked, failures, outage.Round(time.Millisecond))
}

// FuzzParseSentinelURL: any string is refused or read into a Sentinel
// target with a primary and host:port Sentinels; it never panics.
func FuzzParseSentinelURL(f *testing.F) {
	for _, s := range []string{"redis-sentinel://h1:26379,h2:26379/primary", "rediss-sentinel://u:p%40@h:1/m/2",
		"redis-sentinel://@/", "redis-sentinel://h:1/m/x", "redis://h:1/0", "redis-sentinel://:%zz@h:1/m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := redisstore.ParseSentinelURL(raw)
		if err != nil || got == nil {
			return
		}
		if got.Sentinel == nil || got.Sentinel.Master == "" || len(got.Sentinel.Addrs) == 0 || got.Sentinel.DB < 0 {
			t.Fatalf("%q read as %+v", raw, got)
		}
		for _, a := range got.Sentinel.Addrs {
			if _, _, err := net.SplitHostPort(a); err != nil {
				t.Fatalf("%q: Sentinel address %q: %v", raw, a, err)
			}
		}
	})
}

// TestRedisAppendsShareRoundTrips: Appends to many journals at once, sent
// together in pipelines, each get their own answer — a conflict goes to
// the Append that caused it and to no other — and an Append whose caller
// gave up before it was sent is not written.
func TestRedisAppendsShareRoundTrips(t *testing.T) {
	t.Parallel()
	s := openRedis(t, redisstore.RedisOptions{})
	ctx := t.Context()
	const writers, appends = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			k := store.ThreadKey{Agent: "agent", ThreadID: fmt.Sprint("t", w)}
			for i := range int64(appends) {
				if err := s.Append(ctx, k, store.Entry{Seq: i + 1, RunID: "r", Event: []byte(`{}`)}); err != nil {
					t.Errorf("append %d to %s: %v", i+1, k, err)
					return
				}
				if w%2 == 0 {
					// A stale number: this Append alone conflicts.
					if err := s.Append(ctx, k, store.Entry{Seq: i + 1, RunID: "r", Event: []byte(`{}`)}); !errors.Is(err, store.ErrConflict) {
						t.Errorf("append %d again to %s: %v, want ErrConflict", i+1, k, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for w := range writers {
		k := store.ThreadKey{Agent: "agent", ThreadID: fmt.Sprint("t", w)}
		if last, err := s.LastSeq(ctx, k); err != nil || last != appends {
			t.Errorf("journal %s ends at %d (%v), want %d", k, last, err, appends)
		}
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	k := store.ThreadKey{Agent: "agent", ThreadID: "gone"}
	if err := s.Append(gone, k, store.Entry{Seq: 1, RunID: "r", Event: []byte(`{}`)}); !errors.Is(err, context.Canceled) {
		t.Errorf("append with a cancelled context: %v", err)
	}
	if last, _ := s.LastSeq(ctx, k); last != 0 {
		t.Errorf("an append whose caller gave up was written (journal ends at %d)", last)
	}
}
