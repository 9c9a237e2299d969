package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RedisStore is the shared backend: any number of bridge processes open
// the same Redis (6.2 or later) and see one set of threads, interrupts and
// journals. Every write that must be atomic is one Lua script, which Redis
// runs without interleaving any other command. Durability is the server's:
// a Redis without appendonly (AOF) loses the writes since its last
// snapshot when it crashes, where the embedded store loses nothing.
//
// Keys, for a key prefix P (RedisOptions.Prefix) and a thread whose tag is
// T = "{" + agent + "\x00" + base64url(threadID) + "}":
//
//	P T ":thread"   hash: "version" → decimal version, "thread" → the Thread's JSON
//	P T ":journal"  stream: entry id "<seq>-1", fields "run", "terminal" ("0"/"1"), "event"
//	P "active"      set of agent + "\x00" + threadID, the threads with an active run
//	P "leases"      sorted set of the same members, scored by lease expiry (Unix ms; +inf without a lease)
//	P "interrupts"  hash: interrupt id → agent + "\x00" + threadID
//	P "wake:" …     short-lived streams that end a Wait connection's XREAD early (see Wait)
//
// Agent names never contain NUL (config allows [a-z0-9_-]) and base64url
// never does, so a key is unambiguous whatever the thread id holds; thread
// keys continue P with "{", the fixed ones never do. The
// braces are a Redis Cluster hash tag: a thread's record and journal hash
// to the same slot, so the script that writes both stays valid there. The
// "active" set and the multi-key XREAD behind Wait span slots, though:
// OpenRedisStore connects to one server (or a proxy in front of a cluster
// that accepts cross-slot scripts), not to a cluster directly.
//
// The version sits beside the JSON so the scripts compare it without
// decoding the record. Journal entry ids are "<seq>-1": the id is the
// sequence number, so Read is an XRANGE from an exclusive start and a
// journal's next seq is its last id plus one, assigned inside the script.
// Journals are never trimmed: their entry ids are the gap-free sequence.
type RedisStore struct {
	client *redis.Client
	addr   string // host:port or socket path, for errors (never the URL: it may hold a password)
	prefix string

	activeKey     string
	leasesKey     string
	interruptsKey string

	waits *redisWaits

	closeOnce sync.Once
	closeErr  error
}

var _ Store = (*RedisStore)(nil)

// RedisOptions tunes a RedisStore; the zero value is the default.
type RedisOptions struct {
	// Prefix starts every key the store uses, so several independent
	// stores (two bridge deployments, parallel tests) can share one Redis.
	// Bridges that must share threads use the same prefix. Default
	// "a2a-bridge:".
	Prefix string
	// MaxWaitConns caps the connections Wait's blocking reads use: one per
	// 64 journals being waited on, started as needed (see Wait). Past the
	// cap, each connection's reads name more journals. Default 256.
	MaxWaitConns int
}

// DefaultRedisPrefix is RedisOptions.Prefix's default.
const DefaultRedisPrefix = "a2a-bridge:"

const defaultRedisMaxWaitConns = 256

// OpenRedisStore connects to the Redis at url (redis://, rediss:// or
// unix://, as go-redis's ParseURL reads them, query options included) and
// checks it answers, so a bridge started against an unreachable Redis
// fails at once instead of on its first request.
func OpenRedisStore(ctx context.Context, rawURL string, opts RedisOptions) (*RedisStore, error) {
	copt, err := redis.ParseURL(rawURL)
	if err != nil {
		// url.Parse's error repeats the URL, password included.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("tasks: redis: open store: bad URL: %w", err)
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultRedisPrefix
	}
	if opts.MaxWaitConns <= 0 {
		opts.MaxWaitConns = defaultRedisMaxWaitConns
	}
	// Wait's reads use connections of their own, so tailing clients never
	// take the connections writes need. They only read, so go-redis may
	// retry them as it does by default.
	// Each wait connection is held by its shard while the shard has
	// journals to watch (see Wait); a few stay open between uses.
	wopt := *copt
	wopt.PoolSize = opts.MaxWaitConns
	wopt.MinIdleConns = 0
	wopt.MaxIdleConns = 4
	wopt.PipelinePoolSize = -1
	// go-redis's Conns share their client's options, and the first
	// connection to fail the maintenance-notifications handshake (any
	// server but Redis Enterprise's) rewrites them under a per-Conn lock:
	// a data race between two shards' first XREADs. Those notifications
	// only spare a connection a handoff; an XREAD connection that breaks
	// is replaced anyway.
	wopt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if wopt.ClientName != "" {
		wopt.ClientName += "-wait"
	}

	// A write whose reply was lost may have run, and go-redis would replay
	// it; the replay would then be refused as a conflict (the version or
	// the numbers moved on), which reads as somebody else's write. So a
	// failed command is reported, never replayed: the caller knows what it
	// may retry (the journal writer checks whether its entries landed).
	copt.MaxRetries = -1
	s := &RedisStore{
		client:        redis.NewClient(copt),
		addr:          copt.Addr,
		prefix:        opts.Prefix,
		activeKey:     opts.Prefix + "active",
		leasesKey:     opts.Prefix + "leases",
		interruptsKey: opts.Prefix + "interrupts",
	}
	if err := s.client.Ping(ctx).Err(); err != nil {
		s.client.Close()
		return nil, fmt.Errorf("tasks: redis: open store at %s: %w", s.addr, err)
	}
	// Older servers fail every Read (no exclusive XRANGE start): say so
	// now. A server that refuses INFO (some managed ones) is given the
	// benefit of the doubt.
	if info, err := s.client.Info(ctx, "server").Result(); err == nil {
		if v, ok := redisVersionOK(info); !ok {
			s.client.Close()
			return nil, fmt.Errorf("tasks: redis: open store at %s: Redis %s is too old, the store needs 6.2 or later", s.addr, v)
		}
	}
	// Wake streams are per process: another bridge's kicks must not end
	// this one's XREADs.
	s.waits = newRedisWaits(ctx, redis.NewClient(&wopt), s.client,
		opts.Prefix+"wake:"+rand.Text()+":", opts.MaxWaitConns)
	return s, nil
}

// redisVersionOK reads redis_version in INFO's text and says whether it is
// 6.2 or later; a version it cannot read passes.
func redisVersionOK(info string) (string, bool) {
	for line := range strings.Lines(info) {
		v, found := strings.CutPrefix(strings.TrimSpace(line), "redis_version:")
		if !found {
			continue
		}
		parts := strings.SplitN(v, ".", 3)
		if len(parts) < 2 {
			return v, true
		}
		major, err1 := strconv.Atoi(parts[0])
		minor, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			return v, true
		}
		return v, major > 6 || major == 6 && minor >= 2
	}
	return "", true
}

// threadTag is the hash tag shared by a thread's keys (see RedisStore).
func (s *RedisStore) threadTag(k ThreadKey) string {
	return s.prefix + "{" + k.Agent + "\x00" + base64.RawURLEncoding.EncodeToString([]byte(k.ThreadID)) + "}"
}

func (s *RedisStore) threadKey(k ThreadKey) string  { return s.threadTag(k) + ":thread" }
func (s *RedisStore) journalKey(k ThreadKey) string { return s.threadTag(k) + ":journal" }

// keyMember is how the active set and the interrupt index name a thread:
// the same form as the bolt store's keys.
func keyMember(k ThreadKey) string { return k.Agent + "\x00" + k.ThreadID }

func parseKeyMember(m string) (ThreadKey, error) {
	agent, thread, ok := strings.Cut(m, "\x00")
	if !ok {
		return ThreadKey{}, fmt.Errorf("malformed thread key %q", m)
	}
	return ThreadKey{Agent: agent, ThreadID: thread}, nil
}

// seqID is the journal entry id of seq; XREAD and an XRANGE start of
// "(" + seqID(after) both mean "entries after seq".
func seqID(seq int64) string { return strconv.FormatInt(seq, 10) + "-1" }

func parseSeqID(id string) (int64, error) {
	ms, sub, ok := strings.Cut(id, "-")
	seq, err := strconv.ParseInt(ms, 10, 64)
	if !ok || sub != "1" || err != nil || seq < 1 {
		return 0, fmt.Errorf("journal entry id %q is not <seq>-1", id)
	}
	return seq, nil
}

// journalAppendLua defines checkEntries and appendEntries for the entries
// in ARGV[first..] (seq, run id, terminal, event quadruples) and the
// stream `journal`. checkEntries reports whether their numbers increase
// strictly from above the journal's last entry; the scripts call it before
// writing anything, so a refused numbering changes nothing.
const journalAppendLua = `
local function checkEntries()
	if #ARGV < first then
		return true
	end
	local last = 0
	local tip = redis.call('XREVRANGE', journal, '+', '-', 'COUNT', 1)[1]
	if tip then
		last = tonumber(string.match(tip[1], '^(%d+)-1$'))
		if not last then
			return redis.error_reply('journal entry id ' .. tip[1] .. ' is not <seq>-1')
		end
	end
	for i = first, #ARGV, 4 do
		local seq = tonumber(ARGV[i])
		if not seq or seq <= last then
			return false
		end
		last = seq
	end
	return true
end
local function appendEntries()
	for i = first, #ARGV, 4 do
		redis.call('XADD', journal, ARGV[i] .. '-1',
			'run', ARGV[i + 1], 'terminal', ARGV[i + 2], 'event', ARGV[i + 3])
	end
end
`

// putScript is PutThread and PutThreadAndAppend. KEYS: thread, journal,
// active set, leases. ARGV: expected version, new version, the Thread's
// JSON, its active-set member, "0" without an active run or else its lease
// expiry as a sorted-set score, then the entries. It
// returns 1, or 0 on a version or numbering conflict, having written
// nothing.
var putScript = redis.NewScript(`local journal, first = KEYS[2], 6` + journalAppendLua + `
if (redis.call('HGET', KEYS[1], 'version') or '0') ~= ARGV[1] then
	return 0
end
local ok = checkEntries()
if type(ok) == 'table' then return ok end
if not ok then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'thread', ARGV[3])
if ARGV[5] ~= '0' then
	redis.call('SADD', KEYS[3], ARGV[4])
	redis.call('ZADD', KEYS[4], ARGV[5], ARGV[4])
else
	redis.call('SREM', KEYS[3], ARGV[4])
	redis.call('ZREM', KEYS[4], ARGV[4])
end
appendEntries()
return 1
`)

// appendScript is Append. KEYS: journal. ARGV: the entries. It returns 1,
// or 0 when their numbering does not continue the journal.
var appendScript = redis.NewScript(`local journal, first = KEYS[1], 1` + journalAppendLua + `
local ok = checkEntries()
if type(ok) == 'table' then return ok end
if not ok then return 0 end
appendEntries()
return 1
`)

// lastSeqScript returns the id of the journal's last entry (false when
// empty): XREVRANGE from a client would send the whole entry back.
var lastSeqScript = redis.NewScript(`
local tip = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if tip then return tip[1] end
return false
`)

// deleteScript is DeleteThread. KEYS: thread, active set, leases. ARGV: expected
// version, active-set member. It returns 1, 0 on a conflict, -1 when no
// thread is stored.
var deleteScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return -1 end
if v ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
return 1
`)

// entryArgs flattens entries into script arguments; events go as they
// are, never re-encoded.
func entryArgs(args []any, entries []Entry) []any {
	for _, e := range entries {
		terminal := "0"
		if e.Terminal {
			terminal = "1"
		}
		args = append(args, strconv.FormatInt(e.Seq, 10), e.RunID, terminal, e.Event)
	}
	return args
}

// GetThread implements Store.
func (s *RedisStore) GetThread(ctx context.Context, key ThreadKey) (*Thread, error) {
	v, err := s.client.HGet(ctx, s.threadKey(key), "thread").Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("tasks: redis: get thread %s: %w", key, err)
	}
	th := new(Thread)
	if err := json.Unmarshal(v, th); err != nil {
		return nil, fmt.Errorf("tasks: redis: get thread %s: decode: %w", key, err)
	}
	th.Key = key
	return th, nil
}

// PutThread implements Store.
func (s *RedisStore) PutThread(ctx context.Context, th *Thread) (int64, error) {
	return s.PutThreadAndAppend(ctx, th)
}

// PutThreadAndAppend implements Store: one script writes the record, the
// active set and the entries.
func (s *RedisStore) PutThreadAndAppend(ctx context.Context, th *Thread, entries ...Entry) (int64, error) {
	// The new version is known before the script runs (it succeeds only if
	// the stored one is th.Version), so the JSON already carries it.
	rec := *th
	rec.Version = th.Version + 1
	rec.UpdatedAt = time.Now()
	v, err := json.Marshal(&rec)
	if err != nil {
		return 0, fmt.Errorf("tasks: redis: put thread %s: %w", th.Key, err)
	}
	active := "0"
	switch {
	case th.ActiveRunID != "" && th.LeaseExpires.IsZero():
		active = "+inf" // never lapses: not the lease scan's
	case th.ActiveRunID != "":
		active = strconv.FormatInt(th.LeaseExpires.UnixMilli(), 10)
	}
	args := make([]any, 0, 5+4*len(entries))
	args = append(args, strconv.FormatInt(th.Version, 10), strconv.FormatInt(rec.Version, 10), v, keyMember(th.Key), active)
	args = entryArgs(args, entries)
	keys := []string{s.threadKey(th.Key), s.journalKey(th.Key), s.activeKey, s.leasesKey}
	ok, err := putScript.Run(ctx, s.client, keys, args...).Int64()
	if err != nil {
		return 0, fmt.Errorf("tasks: redis: put thread %s: %w", th.Key, err)
	}
	if ok == 0 {
		return 0, ErrConflict
	}
	return rec.Version, nil
}

// ActiveThreads implements Store: the active set, which the scripts keep
// equal to the records' ActiveRunID.
func (s *RedisStore) ActiveThreads(ctx context.Context) ([]ThreadKey, error) {
	members, err := s.client.SMembers(ctx, s.activeKey).Result()
	if err != nil {
		return nil, fmt.Errorf("tasks: redis: active threads: %w", err)
	}
	out := make([]ThreadKey, 0, len(members))
	for _, m := range members {
		k, err := parseKeyMember(m)
		if err != nil {
			return nil, fmt.Errorf("tasks: redis: active threads: %w", err)
		}
		out = append(out, k)
	}
	return out, nil
}

// LapsedLeases implements LeaseLister: one ZRANGE BYSCORE over the leases
// sorted set, so a scan costs the lapsed runs, not all active ones. It
// lists at most 1000 a scan; the next scan gets the rest.
func (s *RedisStore) LapsedLeases(ctx context.Context, now time.Time) ([]ThreadKey, error) {
	members, err := s.client.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.leasesKey, ByScore: true,
		Start: "-inf", Stop: strconv.FormatInt(now.UnixMilli(), 10), Count: 1000}).Result()
	if err != nil {
		return nil, fmt.Errorf("tasks: redis: lapsed leases: %w", err)
	}
	out := make([]ThreadKey, 0, len(members))
	for _, m := range members {
		k, err := parseKeyMember(m)
		if err != nil {
			return nil, fmt.Errorf("tasks: redis: lapsed leases: %w", err)
		}
		out = append(out, k)
	}
	return out, nil
}

var _ LeaseLister = (*RedisStore)(nil)

// DeleteThread implements Store. The journal stays.
func (s *RedisStore) DeleteThread(ctx context.Context, key ThreadKey, version int64) error {
	keys := []string{s.threadKey(key), s.activeKey, s.leasesKey}
	r, err := deleteScript.Run(ctx, s.client, keys, strconv.FormatInt(version, 10), keyMember(key)).Int64()
	if err != nil {
		return fmt.Errorf("tasks: redis: delete thread %s: %w", key, err)
	}
	switch r {
	case -1:
		return ErrNotFound
	case 0:
		return ErrConflict
	}
	return nil
}

// Append implements Store.
func (s *RedisStore) Append(ctx context.Context, key ThreadKey, entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	keys := []string{s.journalKey(key)}
	ok, err := appendScript.Run(ctx, s.client, keys, entryArgs(make([]any, 0, 4*len(entries)), entries)...).Int64()
	if err != nil {
		return fmt.Errorf("tasks: redis: append to journal %s: %w", key, err)
	}
	if ok == 0 {
		return ErrConflict
	}
	return nil
}

// Read implements Store.
func (s *RedisStore) Read(ctx context.Context, key ThreadKey, after int64, limit int) ([]Entry, error) {
	after = max(after, 0)
	jk, start := s.journalKey(key), "("+seqID(after)
	var cmd *redis.XMessageSliceCmd
	if limit > 0 {
		cmd = s.client.XRangeN(ctx, jk, start, "+", int64(limit))
	} else {
		cmd = s.client.XRange(ctx, jk, start, "+")
	}
	msgs, err := cmd.Result()
	if err != nil {
		return nil, fmt.Errorf("tasks: redis: read journal %s: %w", key, err)
	}
	out := make([]Entry, 0, len(msgs))
	for _, m := range msgs {
		e, err := decodeRedisEntry(m)
		if err != nil {
			return nil, fmt.Errorf("tasks: redis: read journal %s: %w", key, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func decodeRedisEntry(m redis.XMessage) (Entry, error) {
	seq, err := parseSeqID(m.ID)
	if err != nil {
		return Entry{}, err
	}
	run, _ := m.Values["run"].(string)
	terminal, _ := m.Values["terminal"].(string)
	event, ok := m.Values["event"].(string)
	if !ok {
		return Entry{}, fmt.Errorf("journal entry %s has no event", m.ID)
	}
	return Entry{Seq: seq, RunID: run, Terminal: terminal == "1", Event: []byte(event)}, nil
}

// LastSeq implements Store.
func (s *RedisStore) LastSeq(ctx context.Context, key ThreadKey) (int64, error) {
	id, err := lastSeqScript.Run(ctx, s.client, []string{s.journalKey(key)}).Text()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err == nil {
		var seq int64
		if seq, err = parseSeqID(id); err == nil {
			return seq, nil
		}
	}
	return 0, fmt.Errorf("tasks: redis: last seq of journal %s: %w", key, err)
}

// Wait implements Store. Entries appended by any process wake it: the
// store watches journals with XREAD BLOCK, which Redis answers as soon as
// any process appends.
//
// A blocking XREAD holds its connection, so one per Wait would cost
// 10,000 connections (and Redis's default maxclients) for 10,000 tailing
// clients. Instead the store multiplexes: every Wait on a journal shares
// that journal's place in one XREAD, and one connection's XREAD names up
// to redisWaitJournalsPerConn (64) journals at once. Connections are
// started as journals are waited on, up to RedisOptions.MaxWaitConns, so
// 10,000 Waits cost one connection if they tail one journal, and 157 if
// they tail 10,000. Not more journals per XREAD, because any Append to one
// of them ends that XREAD and the next names them all again: Redis's work
// per Append grows with their number. A Wait itself costs one LastSeq on
// the ordinary pool and an in-process registration.
//
// Each XREAD blocks for at most redisWaitBlock (1 s). A Wait on a journal
// not in the XREAD in progress ends it early with an XADD to that
// connection's wake stream, which the XREAD also reads. Cancelling ctx
// ends a Wait at once, without Redis; Close ends every Wait.
func (s *RedisStore) Wait(ctx context.Context, key ThreadKey, after int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Register before looking, so an entry appended after the look wakes
	// this Wait.
	w, err := s.waits.add(ctx, s.journalKey(key), after)
	if err != nil {
		return err
	}
	defer w.remove()
	last, err := s.LastSeq(ctx, key)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if last > after {
		return nil
	}
	s.waits.parked.Add(1)
	defer s.waits.parked.Add(-1)
	select {
	case <-w.ready:
		return w.err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.waits.done:
		return s.waits.closedError()
	}
}

// IndexInterrupt implements Store.
func (s *RedisStore) IndexInterrupt(ctx context.Context, id string, key ThreadKey) error {
	if err := s.client.HSet(ctx, s.interruptsKey, id, keyMember(key)).Err(); err != nil {
		return fmt.Errorf("tasks: redis: index interrupt %s: %w", id, err)
	}
	return nil
}

// InterruptThread implements Store.
func (s *RedisStore) InterruptThread(ctx context.Context, id string) (ThreadKey, error) {
	m, err := s.client.HGet(ctx, s.interruptsKey, id).Result()
	if errors.Is(err, redis.Nil) {
		return ThreadKey{}, ErrNotFound
	}
	if err != nil {
		return ThreadKey{}, fmt.Errorf("tasks: redis: interrupt %s: %w", id, err)
	}
	key, err := parseKeyMember(m)
	if err != nil {
		return ThreadKey{}, fmt.Errorf("tasks: redis: interrupt %s: %w", id, err)
	}
	return key, nil
}

// Ping implements Store.
func (s *RedisStore) Ping(ctx context.Context) error {
	if err := s.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("tasks: redis: ping %s: %w", s.addr, err)
	}
	return nil
}

// Close ends every Wait, waits for the store's goroutines and closes its
// connections. Calling it again does nothing.
func (s *RedisStore) Close() error {
	s.closeOnce.Do(func() {
		werr := s.waits.close()
		if err := errors.Join(werr, s.client.Close()); err != nil {
			s.closeErr = fmt.Errorf("tasks: redis: close store at %s: %w", s.addr, err)
		}
	})
	return s.closeErr
}

// redisWaitBlock bounds one blocking XREAD, so a journal whose Waits all
// left stops being watched within about that long.
const redisWaitBlock = time.Second

// redisWaitJournalsPerConn is how many journals one wait connection's
// XREAD names before another connection is started. Every Append to one
// of them ends that XREAD, and the next names them all again, which costs
// Redis about a microsecond per journal: 64 keeps that below the cost of
// the Append itself.
const redisWaitJournalsPerConn = 64

// redisWakeTTL is how long a wake stream outlives its last use: they are
// deleted by expiry, so a bridge that crashes leaves nothing behind.
const redisWakeTTL = 10 * time.Minute

// redisWaits is a RedisStore's Wait machinery (see RedisStore.Wait). Each
// watched journal is assigned to one shard, filling shards in order; each
// shard has one goroutine running its XREADs on one connection of client,
// started when the shard gets its first journal. Close waits for them.
type redisWaits struct {
	client     *redis.Client // blocking XREADs only
	kicker     *redis.Client // the store's pool, for wake-stream XADDs
	wakePrefix string
	maxShards  int
	addr       string

	mu sync.Mutex
	// assigned maps each watched journal to its shard; journals counts
	// them per shard.
	assigned map[string]*redisWaitShard
	journals map[*redisWaitShard]int
	shards   []*redisWaitShard
	// start hands new shards to the goroutine that owns the store's
	// lifetime context and starts theirs.
	start chan *redisWaitShard

	cancel context.CancelFunc // ends the goroutines' commands
	done   chan struct{}      // closed by close, ends every Wait
	wg     sync.WaitGroup

	// parked counts the Waits that found nothing new and block until an
	// XREAD wakes them: tests wait for it before appending.
	parked atomic.Int64
}

// redisWaitShard watches the journals assigned to one wait connection.
type redisWaitShard struct {
	waits   *redisWaits
	wakeKey string

	mu sync.Mutex
	// watched are the journals with a Wait in progress, or that had one in
	// the previous XREAD (see next).
	watched map[string]*redisWatch
	// inflight is each journal of the XREAD in progress and the seq it
	// reads after; nil when none is in progress.
	inflight map[string]int64
	// kicked says a wake XADD was sent for the XREAD in progress: one is
	// enough to end it.
	kicked bool
	// pending wakes the goroutine when it sleeps with nothing to watch.
	pending chan struct{}

	// lastWake is the last wake-stream entry an XREAD returned.
	lastWake string
}

// redisWatch is one watched journal.
type redisWatch struct {
	waiters map[*redisWaiter]struct{}
	// lastSeen is the highest seq an XREAD returned for the journal.
	lastSeen int64
	// idle says the journal had no Wait when the XREAD in progress began.
	idle bool
}

// redisWaiter is one Wait in progress.
type redisWaiter struct {
	after int64
	shard *redisWaitShard
	watch *redisWatch
	ready chan struct{} // closed when an entry after `after` is seen, or err set
	err   error
}

func newRedisWaits(ctx context.Context, client, kicker *redis.Client, wakePrefix string, maxShards int) *redisWaits {
	ws := &redisWaits{
		client: client, kicker: kicker, wakePrefix: wakePrefix, maxShards: maxShards,
		addr:     client.Options().Addr,
		assigned: make(map[string]*redisWaitShard),
		journals: make(map[*redisWaitShard]int),
		start:    make(chan *redisWaitShard, maxShards),
		done:     make(chan struct{}),
	}
	// The goroutines live as long as the store, not as the open call.
	ctx, ws.cancel = context.WithCancel(context.WithoutCancel(ctx))
	ws.wg.Go(func() {
		for {
			select {
			case sh := <-ws.start:
				ws.wg.Go(func() { sh.run(ctx) })
			case <-ws.done:
				return
			}
		}
	})
	return ws
}

func (ws *redisWaits) closedError() error {
	return fmt.Errorf("tasks: redis: store at %s: %w", ws.addr, redis.ErrClosed)
}

// close ends every Wait and the goroutines. Closing the client closes the
// connections under their blocked XREADs, so it does not wait for
// redisWaitBlock.
func (ws *redisWaits) close() error {
	close(ws.done)
	ws.cancel()
	err := ws.client.Close()
	ws.wg.Wait()
	return err
}

// shardFor returns the shard watching journal jk, assigning one if none
// does: the first with room, else a new one, else (all maxShards full) the
// least loaded. ws.mu is held.
func (ws *redisWaits) shardFor(jk string) *redisWaitShard {
	if sh := ws.assigned[jk]; sh != nil {
		return sh
	}
	var pick *redisWaitShard
	for _, sh := range ws.shards {
		if n := ws.journals[sh]; n < redisWaitJournalsPerConn {
			pick = sh
			break
		}
		if len(ws.shards) == ws.maxShards && (pick == nil || ws.journals[sh] < ws.journals[pick]) {
			pick = sh
		}
	}
	if pick == nil {
		pick = &redisWaitShard{
			waits:    ws,
			wakeKey:  ws.wakePrefix + strconv.Itoa(len(ws.shards)),
			watched:  make(map[string]*redisWatch),
			pending:  make(chan struct{}, 1),
			lastWake: "0-0",
		}
		ws.shards = append(ws.shards, pick)
		ws.start <- pick // never blocks: room for maxShards
	}
	ws.assigned[jk] = pick
	ws.journals[pick]++
	return pick
}

// add registers a Wait for entries after `after` in journal jk, and makes
// sure the XREAD in progress on its shard covers it.
func (ws *redisWaits) add(ctx context.Context, jk string, after int64) (*redisWaiter, error) {
	select {
	case <-ws.done:
		return nil, ws.closedError()
	default:
	}
	ws.mu.Lock()
	sh := ws.shardFor(jk)
	sh.mu.Lock()
	wt := sh.watched[jk]
	if wt == nil {
		wt = &redisWatch{waiters: make(map[*redisWaiter]struct{})}
		sh.watched[jk] = wt
	}
	w := &redisWaiter{after: after, shard: sh, watch: wt, ready: make(chan struct{})}
	wt.waiters[w] = struct{}{}
	wt.idle = false
	kick := false
	if sh.inflight != nil && !sh.kicked {
		// The XREAD in progress wakes for this journal only if it reads
		// it from at most `after`; otherwise end it, and the next one
		// includes the journal.
		if from, ok := sh.inflight[jk]; !ok || from > after {
			kick, sh.kicked = true, true
		}
	}
	sh.mu.Unlock()
	ws.mu.Unlock()
	select {
	case sh.pending <- struct{}{}:
	default:
	}
	if kick {
		sh.kick(ctx)
	}
	return w, nil
}

// kick ends the shard's XREAD in progress: it also reads the wake stream.
func (sh *redisWaitShard) kick(ctx context.Context) {
	_, err := sh.waits.kicker.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: sh.wakeKey, MaxLen: 1, Values: []string{"wake", ""}})
		p.PExpire(ctx, sh.wakeKey, redisWakeTTL)
		return nil
	})
	if err != nil {
		// The Wait that asked waits at most until the XREAD in progress
		// times out (redisWaitBlock), and its LastSeq reports a Redis that
		// is gone; let the next Wait try again.
		sh.mu.Lock()
		sh.kicked = false
		sh.mu.Unlock()
	}
}

// remove ends w's registration; its journal stays watched for one more
// XREAD (see next).
func (w *redisWaiter) remove() {
	w.shard.mu.Lock()
	delete(w.watch.waiters, w)
	w.shard.mu.Unlock()
}

// run is the shard's goroutine: XREAD after XREAD over its journals,
// waking the Waits each answer satisfies. It holds a connection only while
// it has journals to watch.
func (sh *redisWaitShard) run(ctx context.Context) {
	ws := sh.waits
	var conn *redis.Conn
	release := func() {
		if conn != nil {
			conn.Close()
			conn = nil
		}
	}
	defer release()
	var backoff time.Duration
	for {
		streams := sh.next()
		if streams == nil {
			release()
			select {
			case <-sh.pending:
				continue
			case <-ws.done:
				return
			}
		}
		if conn == nil {
			conn = ws.client.Conn()
		}
		res, err := conn.XRead(ctx, &redis.XReadArgs{Streams: streams, Count: 1, Block: redisWaitBlock}).Result()
		if errors.Is(err, redis.Nil) { // the block time passed with nothing new
			res, err = nil, nil
		}
		select {
		case <-ws.done:
			return
		default:
		}
		sh.deliver(res, err)
		if err == nil {
			backoff = 0
			continue
		}
		// Redis is unreachable, or the connection broke: the Waits were
		// told. Take a new connection, after a pause rather than spin.
		release()
		backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ws.done:
			t.Stop()
			return
		}
	}
}

// next returns the next XREAD's streams argument, or nil when there is
// nothing to watch. A journal whose Waits all left stays watched for one
// more XREAD, from its last seen seq: a client tailing a journal calls
// Wait again right after reading, and finding its journal still in the
// XREAD spares that Wait a kick.
func (sh *redisWaitShard) next() []string {
	ws := sh.waits
	ws.mu.Lock() // to unassign the journals dropped
	defer ws.mu.Unlock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	keys := make([]string, 1, len(sh.watched)+1)
	ids := make([]string, 1, len(sh.watched)+1)
	keys[0], ids[0] = sh.wakeKey, sh.lastWake
	inflight := make(map[string]int64, len(sh.watched))
	for jk, wt := range sh.watched {
		from := wt.lastSeen
		if len(wt.waiters) == 0 {
			if wt.idle {
				delete(sh.watched, jk)
				delete(ws.assigned, jk)
				ws.journals[sh]--
				continue
			}
			wt.idle = true
		} else {
			first := true
			for w := range wt.waiters {
				if first || w.after < from {
					from, first = w.after, false
				}
			}
		}
		keys = append(keys, jk)
		ids = append(ids, seqID(from))
		inflight[jk] = from
	}
	if len(inflight) == 0 {
		sh.inflight = nil
		return nil
	}
	sh.inflight, sh.kicked = inflight, false
	return append(keys, ids...)
}

// deliver wakes the Waits an XREAD's answer satisfies, or fails them all
// when it failed.
func (sh *redisWaitShard) deliver(res []redis.XStream, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.inflight = nil
	if err != nil {
		err = fmt.Errorf("tasks: redis: wait for journal at %s: %w", sh.waits.addr, err)
		for _, wt := range sh.watched {
			wt.fail(err)
		}
		return
	}
	for _, st := range res {
		if len(st.Messages) == 0 {
			continue
		}
		id := st.Messages[len(st.Messages)-1].ID
		if st.Stream == sh.wakeKey {
			sh.lastWake = id
			continue
		}
		wt := sh.watched[st.Stream]
		if wt == nil {
			continue
		}
		seq, err := parseSeqID(id)
		if err != nil {
			// Not a journal this store wrote: fail its Waits rather than
			// read it again and again.
			wt.fail(fmt.Errorf("tasks: redis: wait for journal at %s: %w", sh.waits.addr, err))
			continue
		}
		wt.lastSeen = max(wt.lastSeen, seq)
		for w := range wt.waiters {
			if w.after < seq {
				close(w.ready)
				delete(wt.waiters, w)
			}
		}
	}
}

// fail ends the journal's Waits with err; the shard's mu is held.
func (wt *redisWatch) fail(err error) {
	for w := range wt.waiters {
		w.err = err
		close(w.ready)
		delete(wt.waiters, w)
	}
}
