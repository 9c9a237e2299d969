package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// RedisStore is the shared backend: any number of bridge processes open
// the same Redis (6.2 or later) — one server, a primary watched by
// Sentinel, or a Redis Cluster — and see one set of threads, interrupts
// and journals. Every write that must be atomic is one Lua script, which
// Redis runs without interleaving any other command. Durability is the
// server's: a Redis without appendonly (AOF) loses the writes since its
// last snapshot when it crashes, and a primary that fails over loses what
// it had not yet sent its replicas (RedisOptions.WaitReplicas narrows
// that), where the embedded store loses nothing.
//
// Keys, for a key prefix P (RedisOptions.Prefix), a thread whose shard is
// N (redisShard of its agent + "\x00" + threadID, see shardName) and whose
// name is T = agent + "\x00" + base64url(principal) + "\x00" +
// base64url(threadID):
//
//	P "{" N "}:thread:" T   hash: "version" → decimal version, "thread" → the Thread's JSON
//	P "{" N "}:journal:" T  stream: entry id "<seq>-1", fields "run", "terminal" ("0"/"1"), "event"
//	P "{" N "}:active"      set of T: the shard's threads with an active run
//	P "{" N "}:leases"      sorted set of T, scored by lease expiry (Unix ms; +inf without a lease)
//	P "{" M "}:interrupts"  hash: base64url(principal) + "\x00" + interrupt id → T, M the interrupt id's shard
//	P "{" N "}:wake:" …     short-lived streams that end a Wait connection's XREAD early (see Wait)
//	P "layout"              "3": the keys above (see migrateRedisLayout for layouts 1 and 2)
//
// The principal ("" without auth) is part of every name, so the same
// thread id used by two principals is two threads, and an interrupt is
// found among its principal's only.
//
// The braces are a Redis Cluster hash tag: everything one operation on a
// thread touches — its record, its journal, its shard's active set and
// lease index — hashes to the slot of "{N}", so every script stays within
// one slot, as Cluster requires. There are redisShards (128) shards: a
// lease scan is one ZRANGE per shard (pipelined, so one round trip per
// Cluster node), and the shards' slots spread the scans and the writes
// over every primary of a cluster instead of one slot taking all of them.
// Agent names never contain NUL (config allows [a-z0-9_-]) and base64url
// never does, so a name is unambiguous whatever the thread id or the
// principal holds.
//
// The version sits beside the JSON so the scripts compare it without
// decoding the record. Journal entry ids are "<seq>-1": the id is the
// sequence number, so Read is an XRANGE from an exclusive start and a
// journal's next seq is its last id plus one, assigned inside the script.
// Journals are never trimmed: their entry ids are the gap-free sequence.
type RedisStore struct {
	client  redis.UniversalClient
	cluster bool   // keys of different shards never share a command
	addr    string // what to name in errors (never the URL: it may hold a password)
	prefix  string
	// waitReplicas and waitTimeout: see RedisOptions.WaitReplicas.
	waitReplicas int
	waitTimeout  time.Duration

	waits *redisWaits
	// appends sends the Appends waiting at once, in one pipeline (see
	// Append).
	appends store.GroupWriter[*redisAppend]
	// pinger is Ping's own client (one connection, commands bounded by
	// their context), so readiness answers within its deadline even when
	// Redis hangs and the writes hold every connection of client.
	pinger redis.UniversalClient

	closeOnce sync.Once
	closeErr  error
}

var _ Store = (*RedisStore)(nil)

// RedisOptions tunes a RedisStore; the zero value is the default.
type RedisOptions struct {
	// Prefix starts every key the store uses, so several independent
	// stores (two bridge deployments, parallel tests) can share one Redis.
	// Bridges that must share threads use the same prefix. It must not
	// contain braces (they would change the keys' Cluster hash tags).
	// Default "a2a-bridge:".
	Prefix string
	// MaxWaitConns caps the connections Wait's blocking reads use: one per
	// 64 journals being waited on, started as needed (see Wait). Past the
	// cap, each connection's reads name more journals. On a Cluster, where
	// one read names journals of one shard only, up to one connection per
	// shard (128) more may be started. Default 256.
	MaxWaitConns int
	// WaitReplicas, when above 0, makes every write that adds to a journal
	// or changes a thread wait (Redis WAIT) until that many replicas of
	// its primary have it, for at most WaitTimeout: a primary that fails
	// over then loses no event the bridge has acknowledged and shown. A
	// write the replicas did not confirm in time fails (the run ends with
	// a store error rather than claim what may be lost). Default 0: do
	// not wait.
	WaitReplicas int
	// WaitTimeout bounds WaitReplicas' wait. Default 1s.
	WaitTimeout time.Duration
}

// RedisTarget says which Redis deployment to open: exactly one of URL,
// Sentinel and Cluster.
type RedisTarget struct {
	// URL is one server (redis://, rediss://, unix://, as go-redis's
	// ParseURL reads them, query options included) or a Sentinel-watched
	// primary: redis-sentinel://[user:password@]host:port[,host:port…]/master[/db]
	// (rediss-sentinel:// for TLS), where the credentials are the
	// primary's and the hosts are the Sentinels.
	URL string
	// Sentinel is a Sentinel-watched primary given field by field.
	Sentinel *RedisSentinel
	// Cluster lists seed nodes (host:port) of a Redis Cluster; the rest
	// are discovered.
	Cluster []string
	// Username, Password and TLS are the data nodes' credentials and
	// transport for Sentinel and Cluster (a URL carries its own).
	Username, Password string
	TLS                bool
}

// RedisSentinel names a primary watched by Sentinel.
type RedisSentinel struct {
	Master string   // the name the Sentinels know the primary by
	Addrs  []string // the Sentinels, host:port
	// SentinelUsername and SentinelPassword are the Sentinels' own
	// credentials, when they require AUTH.
	SentinelUsername, SentinelPassword string
	DB                                 int
}

// DefaultRedisPrefix is RedisOptions.Prefix's default.
const DefaultRedisPrefix = "a2a-bridge:"

const (
	defaultRedisMaxWaitConns = 256
	defaultRedisWaitTimeout  = time.Second
)

// OpenRedisStore connects to the Redis at url (see RedisTarget.URL).
func OpenRedisStore(ctx context.Context, rawURL string, opts RedisOptions) (*RedisStore, error) {
	return OpenRedis(ctx, RedisTarget{URL: rawURL}, opts)
}

// OpenRedis connects to the Redis deployment target names, checks it
// answers, so a bridge started against an unreachable Redis fails at once
// instead of on its first request, and migrates keys of an older layout
// (see migrateRedisLayout).
func OpenRedis(ctx context.Context, target RedisTarget, opts RedisOptions) (*RedisStore, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultRedisPrefix
	}
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, fmt.Errorf("tasks: redis: open store: key prefix %q contains a brace", opts.Prefix)
	}
	if opts.MaxWaitConns <= 0 {
		opts.MaxWaitConns = defaultRedisMaxWaitConns
	}
	if opts.WaitTimeout <= 0 {
		opts.WaitTimeout = defaultRedisWaitTimeout
	}
	conn, err := redisConnection(target)
	if err != nil {
		return nil, fmt.Errorf("tasks: redis: open store: %w", err)
	}
	// A write whose reply was lost may have run, and go-redis would replay
	// it; the replay would then be refused as a conflict (the version or
	// the numbers moved on), which reads as somebody else's write. So a
	// failed command is reported, never replayed: the caller knows what it
	// may retry (the journal writer checks whether its entries landed).
	// A Cluster client still follows MOVED and ASK (the command did not
	// run), but noReplayHook keeps it from resending a script.
	s := &RedisStore{
		client:       conn.open(func(p *redisPool) { p.maxRetries, p.contextTimeouts = -1, opts.WaitReplicas > 0 }),
		cluster:      conn.cluster != nil,
		addr:         conn.addr,
		prefix:       opts.Prefix,
		waitReplicas: opts.WaitReplicas,
		waitTimeout:  opts.WaitTimeout,
	}
	s.appends.Write = s.sendAppends
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
	if err := s.migrateRedisLayout(ctx); err != nil {
		s.client.Close()
		return nil, fmt.Errorf("tasks: redis: open store at %s: %w", s.addr, err)
	}
	// Wait's reads use connections of their own, so tailing clients never
	// take the connections writes need. They only read, so go-redis may
	// retry them as it does by default. A few stay open between uses.
	// go-redis's connections share their client's options, and the first
	// connection to fail the maintenance-notifications handshake (any
	// server but Redis Enterprise's) rewrites them under a per-connection
	// lock: a data race between two shards' first XREADs. Those
	// notifications only spare a connection a handoff; an XREAD connection
	// that breaks is replaced anyway.
	waitClient := conn.open(func(p *redisPool) {
		p.size, p.minIdle, p.maxIdle, p.noMaintNotifications, p.nameSuffix = opts.MaxWaitConns, 0, 4, true, "-wait"
	})
	s.pinger = conn.open(func(p *redisPool) {
		p.maxRetries, p.contextTimeouts, p.size, p.minIdle, p.maxIdle, p.noMaintNotifications, p.nameSuffix = -1, true, 1, 0, 1, true, "-ping"
	})
	// Wake streams are per process: another bridge's kicks must not end
	// this one's XREADs. On a Cluster one XREAD names the journals of one
	// shard, whose slot its wake stream shares.
	var group func(string) string
	if s.cluster {
		group = redisHashTag
	}
	wakeID := rand.Text()
	s.waits = newRedisWaits(ctx, waitClient, s.client, s.addr,
		func(tag string) string { return s.prefix + tag + ":wake:" + wakeID + ":" }, group, opts.MaxWaitConns)
	return s, nil
}

// redisConn is how to reach a Redis deployment: exactly one of single
// (one server), sentinel and cluster is set.
type redisConn struct {
	single   *redis.Options
	sentinel *redis.FailoverOptions
	cluster  *redis.ClusterOptions
	addr     string // what errors call it
}

// redisPool is what the store's two clients (writes, and Wait's reads)
// set differently on the options a target gives.
type redisPool struct {
	maxRetries, size, minIdle, maxIdle int // 0: as the target says
	noMaintNotifications               bool
	contextTimeouts                    bool // commands end at their context's deadline
	nameSuffix                         string
}

// open makes a client of c with pool's changes.
func (c redisConn) open(tweak func(*redisPool)) redis.UniversalClient {
	var p redisPool
	tweak(&p)
	apply := func(retries, size, minIdle, maxIdle *int, maint **maintnotifications.Config, name *string, ctxTimeouts *bool) {
		*ctxTimeouts = *ctxTimeouts || p.contextTimeouts
		if p.maxRetries != 0 {
			*retries = p.maxRetries
		}
		if p.size != 0 {
			*size, *minIdle, *maxIdle = p.size, p.minIdle, p.maxIdle
		}
		if p.noMaintNotifications {
			*maint = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		}
		if *name != "" {
			*name += p.nameSuffix
		}
	}
	switch {
	case c.cluster != nil:
		o := *c.cluster
		apply(&o.MaxRedirects, &o.PoolSize, &o.MinIdleConns, &o.MaxIdleConns, &o.MaintNotificationsConfig, &o.ClientName, &o.ContextTimeoutEnabled)
		if p.maxRetries != 0 {
			// MaxRedirects also bounds MOVED/ASK redirects: keep a few; the
			// hook stops the replays.
			o.MaxRedirects = 3
		}
		cc := redis.NewClusterClient(&o)
		if p.maxRetries != 0 {
			cc.OnNewNode(func(node *redis.Client) { node.AddHook(noReplayHook{}) })
		}
		return cc
	case c.sentinel != nil:
		o := *c.sentinel
		var maint *maintnotifications.Config // a failover client does not negotiate them
		apply(&o.MaxRetries, &o.PoolSize, &o.MinIdleConns, &o.MaxIdleConns, &maint, &o.ClientName, &o.ContextTimeoutEnabled)
		return redis.NewFailoverClient(&o)
	default:
		o := *c.single
		apply(&o.MaxRetries, &o.PoolSize, &o.MinIdleConns, &o.MaxIdleConns, &o.MaintNotificationsConfig, &o.ClientName, &o.ContextTimeoutEnabled)
		return redis.NewClient(&o)
	}
}

// redisConnection reads target.
func redisConnection(target RedisTarget) (redisConn, error) {
	set := 0
	for _, ok := range []bool{target.URL != "", target.Sentinel != nil, target.Cluster != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return redisConn{}, errors.New("name exactly one of a URL, a Sentinel and a Cluster")
	}
	var tlsConfig *tls.Config
	if target.TLS {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	switch {
	case target.Cluster != nil:
		if len(target.Cluster) == 0 {
			return redisConn{}, errors.New("a Cluster needs at least one seed node")
		}
		return redisConn{cluster: &redis.ClusterOptions{Addrs: target.Cluster, Username: target.Username,
			Password: target.Password, TLSConfig: tlsConfig}, addr: "cluster " + strings.Join(target.Cluster, ",")}, nil
	case target.Sentinel != nil:
		st := target.Sentinel
		if st.Master == "" || len(st.Addrs) == 0 {
			return redisConn{}, errors.New("a Sentinel needs the primary's name and at least one Sentinel address")
		}
		return redisConn{sentinel: &redis.FailoverOptions{MasterName: st.Master, SentinelAddrs: st.Addrs, DB: st.DB,
			Username: target.Username, Password: target.Password, TLSConfig: tlsConfig,
			SentinelUsername: st.SentinelUsername, SentinelPassword: st.SentinelPassword,
		}, addr: "sentinel " + st.Master + "@" + strings.Join(st.Addrs, ",")}, nil
	}
	if sentinel, err := parseSentinelURL(target.URL); sentinel != nil || err != nil {
		if err != nil {
			return redisConn{}, fmt.Errorf("bad URL: %w", err)
		}
		return redisConnection(*sentinel)
	}
	copt, err := redis.ParseURL(target.URL)
	if err != nil {
		// url.Parse's error repeats the URL, password included.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return redisConn{}, fmt.Errorf("bad URL: %w", err)
	}
	return redisConn{single: copt, addr: copt.Addr}, nil
}

// parseSentinelURL reads redis-sentinel://[user:password@]host:port[,host:port…]/master[/db]
// (rediss-sentinel:// for TLS); nil, nil when rawURL has another scheme.
func parseSentinelURL(rawURL string) (*RedisTarget, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok || (scheme != "redis-sentinel" && scheme != "rediss-sentinel") {
		return nil, nil
	}
	authority, path, _ := strings.Cut(rest, "/")
	var user, password string
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		info := authority[:at]
		authority = authority[at+1:]
		u, p, hasPassword := strings.Cut(info, ":")
		var err1, err2 error
		user, err1 = url.PathUnescape(u)
		if hasPassword {
			password, err2 = url.PathUnescape(p)
		}
		if err1 != nil || err2 != nil {
			return nil, errors.New("the user or password is not URL-escaped")
		}
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		return nil, errors.New("a redis-sentinel URL takes no query (use the store.sentinel block for more options)")
	}
	var addrs []string
	for a := range strings.SplitSeq(authority, ",") {
		if _, _, err := net.SplitHostPort(a); err != nil || a == "" {
			return nil, fmt.Errorf("the Sentinel address %q is not host:port", a)
		}
		addrs = append(addrs, a)
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	st := &RedisSentinel{Master: parts[0], Addrs: addrs}
	switch {
	case st.Master == "":
		return nil, errors.New("a redis-sentinel URL names the primary: redis-sentinel://host:26379/mymaster")
	case len(parts) == 2:
		db, err := strconv.Atoi(parts[1])
		if err != nil || db < 0 {
			return nil, fmt.Errorf("database %q is not a number", parts[1])
		}
		st.DB = db
	case len(parts) > 2:
		return nil, errors.New("a redis-sentinel URL's path is /master or /master/db")
	}
	return &RedisTarget{Sentinel: st, Username: user, Password: password, TLS: scheme == "rediss-sentinel"}, nil
}

// noReplayHook keeps a Cluster client from resending a script whose reply
// was lost (a broken connection, a timeout): it may have run. Its error
// then no longer unwraps to the network error go-redis retries on; MOVED,
// ASK and READONLY replies, which mean the script did not run, pass as
// they are.
type noReplayHook struct{}

func (noReplayHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (noReplayHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil || !isScript(cmd) {
			return err
		}
		if _, reply := err.(redis.Error); reply {
			return err
		}
		err = notReplayed{err.Error()}
		cmd.SetErr(err)
		return err
	}
}

func (noReplayHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func isScript(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "evalsha", "eval", "evalsha_ro", "eval_ro", "fcall":
		return true
	}
	return false
}

// notReplayed is a script's network error, kept from go-redis's retries.
type notReplayed struct{ msg string }

func (e notReplayed) Error() string { return e.msg + " (not retried: the script may have run)" }

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

// redisShards is how many shards threads and interrupts are spread over.
// It is part of the storage format: every bridge sharing a Redis must use
// the same, so it is a constant, not an option.
const redisShards = 128

// redisShard is the shard of name: FNV-1a (32-bit) of its bytes, modulo
// redisShards. Pinned by TestRedisKeyLayout.
func redisShard(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % redisShards)
}

// shardTag is shard n's hash tag, "{n}".
func shardTag(n int) string { return "{" + strconv.Itoa(n) + "}" }

// redisHashTag returns the hash tag of key ("{…}", the first pair of
// braces, as Redis Cluster reads it), or the key itself when it has none.
func redisHashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i : i+j+2]
		}
	}
	return key
}

// threadName is T in RedisStore's key list: what names the thread's keys,
// and the thread in the active sets, the lease indexes and the interrupt
// index.
func threadName(k ThreadKey) string {
	return k.Agent + "\x00" + b64(k.Principal) + "\x00" + b64(k.ThreadID)
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// parseThreadName reads a threadName.
func parseThreadName(name string) (ThreadKey, error) {
	agent, rest, ok := strings.Cut(name, "\x00")
	principal, thread, ok2 := strings.Cut(rest, "\x00")
	p, err1 := base64.RawURLEncoding.DecodeString(principal)
	t, err2 := base64.RawURLEncoding.DecodeString(thread)
	if !ok || !ok2 || err1 != nil || err2 != nil {
		// Not quoted: a name carries a principal, which errors (and so
		// logs) never name.
		return ThreadKey{}, errors.New("malformed thread name")
	}
	return ThreadKey{Agent: agent, Principal: string(p), ThreadID: string(t)}, nil
}

// shardName is what a thread's shard is computed from: its agent and
// thread id, not its principal, so that the same thread of layout 2 (which
// had no principal) and of layout 3 is in one shard, and the migration
// moves keys within their slot.
func shardName(agent, threadID string) string { return agent + "\x00" + threadID }

func (s *RedisStore) shardKey(k ThreadKey) string {
	return s.prefix + shardTag(redisShard(shardName(k.Agent, k.ThreadID)))
}

func (s *RedisStore) threadKey(k ThreadKey) string { return s.shardKey(k) + ":thread:" + threadName(k) }
func (s *RedisStore) journalKey(k ThreadKey) string {
	return s.shardKey(k) + ":journal:" + threadName(k)
}
func (s *RedisStore) activeKey(k ThreadKey) string { return s.shardKey(k) + ":active" }
func (s *RedisStore) leasesKey(k ThreadKey) string { return s.shardKey(k) + ":leases" }

func (s *RedisStore) interruptsKey(id string) string {
	return s.prefix + shardTag(redisShard(id)) + ":interrupts"
}

// interruptField is an interrupt's field in its shard's index: the id
// among its principal's.
func interruptField(principal, id string) string { return b64(principal) + "\x00" + id }

// redisLayout is the storage format RedisStore writes (see its key list),
// recorded under P "layout".
const redisLayout = "3"

// migrateRedisLayout brings the keys of an older layout to layout 3, once,
// at the first start of a bridge of this version on them: layout 1 (no
// shards, see migrateLayout1) goes to layout 2, and layout 2 (threads
// without their principal in the key, see migrateLayout2) to layout 3.
// One instance migrates, holding P "layout-migration", and then sets
// P "layout"; an instance starting meanwhile waits for the mark. Bridges
// of an older version must all be stopped first: they would go on writing
// their layout, which this version no longer reads. Layout 1 never ran on
// a Cluster (its scripts crossed slots), so a Cluster without a mark is a
// new store.
func (s *RedisStore) migrateRedisLayout(ctx context.Context) error {
	layoutKey, lockKey := s.prefix+"layout", s.prefix+"layout-migration"
	for {
		from, err := s.client.Get(ctx, layoutKey).Result()
		switch {
		case err == nil && from == redisLayout:
			return nil
		case err == nil && from == "2":
		case err == nil:
			return fmt.Errorf("the keys under %q are in storage layout %q, which this version of the bridge does not read (it writes %s)", s.prefix, from, redisLayout)
		case errors.Is(err, redis.Nil) && s.cluster:
			if err := s.client.SetNX(ctx, layoutKey, redisLayout, 0).Err(); err != nil {
				return fmt.Errorf("storage layout: %w", err)
			}
			continue // read what was set, by this instance or another
		case errors.Is(err, redis.Nil):
			from = "1"
		default:
			return fmt.Errorf("read the storage layout: %w", err)
		}
		token := rand.Text()
		won, err := s.client.SetNX(ctx, lockKey, token, redisMigrationLock).Result()
		if err != nil {
			return fmt.Errorf("storage layout migration: %w", err)
		}
		if won {
			// The lock lapses if this instance dies; while it works, it
			// keeps the lock.
			m := &layoutMigration{s: s, lockKey: lockKey, renewed: time.Now()}
			if from == "1" {
				err = s.migrateLayout1(ctx)
			}
			if err == nil {
				err = m.layout2(ctx)
			}
			if err == nil {
				err = s.client.Set(ctx, layoutKey, redisLayout, 0).Err()
			}
			s.client.Del(context.WithoutCancel(ctx), lockKey)
			if err != nil {
				return fmt.Errorf("storage layout migration from layout %s: %w", from, err)
			}
			return nil
		}
		// Another instance is migrating: look again shortly.
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for another instance to migrate the storage layout: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// redisMigrationLock is how long the migration lock lasts unless renewed:
// the instance migrating renews it as it goes (layoutMigration.renew).
const redisMigrationLock = time.Minute

// layout2Name and layout2Member are how layout 2 named a thread in its
// keys and in its sets; its keys were in the same shards as layout 3's.
func layout2Name(agent, threadID string) string   { return agent + "\x00" + b64(threadID) }
func layout2Member(agent, threadID string) string { return agent + "\x00" + threadID }

// migrateScript moves one thread of layout 1. KEYS: old thread, old
// journal, old active set, old leases, new thread, new journal, new active
// set, new leases. ARGV: the thread's member.
var migrateScript = redis.NewScript(`
for i = 1, 2 do
	if redis.call('EXISTS', KEYS[i]) == 1 then
		redis.call('RENAME', KEYS[i], KEYS[i + 4])
	end
end
if redis.call('SREM', KEYS[3], ARGV[1]) == 1 then
	redis.call('SADD', KEYS[7], ARGV[1])
end
local score = redis.call('ZSCORE', KEYS[4], ARGV[1])
if score then
	redis.call('ZADD', KEYS[8], score, ARGV[1])
	redis.call('ZREM', KEYS[4], ARGV[1])
end
return 1
`)

// migrateLayout1 moves the keys of layout 1 — what bridges before layout 2
// wrote, on one server — to layout 2:
//
//	P "{" agent "\x00" base64url(threadID) "}:thread" and "…:journal"  → the thread's shard's keys
//	P "active", P "leases", P "interrupts"                              → the shards' sets and hashes
//
// Each thread moves in one script (RENAME keeps the records and journals
// as they are), then the interrupt index.
func (s *RedisStore) migrateLayout1(ctx context.Context) error {
	oldActive, oldLeases, oldInterrupts := s.prefix+"active", s.prefix+"leases", s.prefix+"interrupts"
	type thread struct{ agent, id string }
	threads := map[thread]bool{}
	for _, suffix := range []string{"}:thread", "}:journal"} {
		iter := s.client.Scan(ctx, 0, globEscape(s.prefix)+"{*"+suffix, 1000).Iterator()
		for iter.Next(ctx) {
			name, ok := strings.CutPrefix(iter.Val(), s.prefix+"{")
			name, ok2 := strings.CutSuffix(name, suffix)
			agent, enc, ok3 := strings.Cut(name, "\x00")
			id, err := base64.RawURLEncoding.DecodeString(enc)
			if ok && ok2 && ok3 && err == nil {
				threads[thread{agent, string(id)}] = true
			}
		}
		if err := iter.Err(); err != nil {
			return err
		}
	}
	for k := range threads {
		old := s.prefix + "{" + layout2Name(k.agent, k.id) + "}"
		shard := s.prefix + shardTag(redisShard(shardName(k.agent, k.id)))
		name := layout2Name(k.agent, k.id)
		keys := []string{old + ":thread", old + ":journal", oldActive, oldLeases,
			shard + ":thread:" + name, shard + ":journal:" + name, shard + ":active", shard + ":leases"}
		if err := migrateScript.Run(ctx, s.client, keys, layout2Member(k.agent, k.id)).Err(); err != nil {
			return fmt.Errorf("thread %s/%s: %w", k.agent, k.id, err)
		}
	}
	index, err := s.client.HGetAll(ctx, oldInterrupts).Result()
	if err != nil {
		return err
	}
	for id, member := range index {
		if err := s.client.HSet(ctx, s.interruptsKey(id), id, member).Err(); err != nil {
			return err
		}
	}
	// What is left in the old sets names no thread record.
	return s.client.Del(ctx, oldInterrupts, oldActive, oldLeases).Err()
}

// layoutMigration is one run of migrateLayout2's steps, by the instance
// holding the migration lock.
type layoutMigration struct {
	s       *RedisStore
	lockKey string
	renewed time.Time
	// owners caches the principal of each layout-2 thread (by its
	// member) the migration looked up.
	owners map[string]owner
}

// owner is the principal a layout-2 record names; found is false when
// there is no record.
type owner struct {
	principal string
	found     bool
}

// renew extends the migration lock every so often, so that a long
// migration keeps it.
func (m *layoutMigration) renew(ctx context.Context) error {
	if time.Since(m.renewed) < redisMigrationLock/3 {
		return nil
	}
	m.renewed = time.Now()
	return m.s.client.Expire(ctx, m.lockKey, redisMigrationLock).Err()
}

// ownerOf returns the principal the layout-2 record of agent's thread
// names, and whether there is a record.
func (m *layoutMigration) ownerOf(ctx context.Context, agent, threadID string) (owner, error) {
	member := layout2Member(agent, threadID)
	if o, ok := m.owners[member]; ok {
		return o, nil
	}
	key := m.s.prefix + shardTag(redisShard(shardName(agent, threadID))) + ":thread:" + layout2Name(agent, threadID)
	rec, err := m.s.client.HGet(ctx, key, "thread").Bytes()
	var o owner
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return owner{}, err
	default:
		var th struct {
			Principal string `json:"principal"`
		}
		if err := json.Unmarshal(rec, &th); err != nil {
			return owner{}, fmt.Errorf("thread %s/%s: decode: %w", agent, threadID, err)
		}
		o = owner{principal: th.Principal, found: true}
	}
	if m.owners == nil {
		m.owners = map[string]owner{}
	}
	m.owners[member] = o
	return o, nil
}

// migrateInterruptScript moves one entry of a shard's interrupt index to
// its layout-3 field. KEYS: the index. ARGV: the layout-2 field, the
// layout-3 field and thread name ("" for an entry whose thread is gone,
// which is dropped).
var migrateInterruptScript = redis.NewScript(`
redis.call('HDEL', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then
	redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
end
return 1
`)

// migrateLayout2Script moves one thread of layout 2 to layout 3, within its
// slot. KEYS: old thread, old journal, active set, leases, new thread, new
// journal. ARGV: the record's version as read ("" for none: a journal
// alone), old member, new member. It returns 0, moving nothing, when the
// record changed since it was read.
var migrateLayout2Script = redis.NewScript(`
if (redis.call('HGET', KEYS[1], 'version') or '') ~= ARGV[1] then
	return 0
end
for i = 1, 2 do
	if redis.call('EXISTS', KEYS[i]) == 1 then
		redis.call('RENAME', KEYS[i], KEYS[i + 4])
	end
end
if redis.call('SREM', KEYS[3], ARGV[2]) == 1 then
	redis.call('SADD', KEYS[3], ARGV[3])
end
local score = redis.call('ZSCORE', KEYS[4], ARGV[2])
if score then
	redis.call('ZREM', KEYS[4], ARGV[2])
	redis.call('ZADD', KEYS[4], score, ARGV[3])
end
return 1
`)

// layout2 moves the keys of layout 2, whose threads were keyed by agent
// and thread id alone (the principal only inside the record), to layout
// 3, on a server, a Sentinel's primary or every primary of a Cluster:
//
//	P "{" N "}:thread:" agent "\x00" base64url(threadID), "…:journal:…"  → the same shard's keys named by T (with the record's principal)
//	members agent "\x00" threadID of P "{" N "}:active" and "…:leases"   → T
//	P "{" M "}:interrupts" field interrupt id                            → base64url(principal) "\x00" id, valued T
//
// Each thread keeps its shard (shardName has no principal), so every
// script stays within one slot. The interrupt index goes first, while the
// records it needs are where layout 2 put them; a journal whose record is
// gone goes to the principal "" (whose it was cannot be told; with auth
// on, no caller is ""), and an interrupt of a thread that is gone is
// dropped: it cannot be resumed. A migration cut short is taken up again
// by the next start: every step skips what is in layout 3 already.
func (m *layoutMigration) layout2(ctx context.Context) error {
	s := m.s
	for n := range redisShards {
		key := s.prefix + shardTag(n) + ":interrupts"
		index, err := s.client.HGetAll(ctx, key).Result()
		if err != nil {
			return err
		}
		for field, member := range index {
			if strings.Contains(field, "\x00") {
				continue // layout 3 already
			}
			newField, name := "", "" // dropped, unless its thread is there
			agent, threadID, ok := strings.Cut(member, "\x00")
			var o owner
			if ok {
				var err error
				if o, err = m.ownerOf(ctx, agent, threadID); err != nil {
					return err
				}
			}
			if o.found {
				newField = interruptField(o.principal, field)
				name = threadName(ThreadKey{Agent: agent, Principal: o.principal, ThreadID: threadID})
			}
			if err := migrateInterruptScript.Run(ctx, s.client, []string{key}, field, newField, name).Err(); err != nil {
				return fmt.Errorf("interrupt %s: %w", field, err)
			}
			if err := m.renew(ctx); err != nil {
				return err
			}
		}
	}

	type thread struct{ agent, id string }
	threads := map[thread]bool{}
	for _, kind := range []string{":thread:", ":journal:"} {
		err := s.scan(ctx, globEscape(s.prefix)+"{*}"+kind+"*", func(key string) {
			_, name, ok := strings.Cut(key, "}"+kind)
			if !ok || strings.Count(name, "\x00") != 1 {
				return // layout 3 already, or not a thread's
			}
			agent, enc, _ := strings.Cut(name, "\x00")
			if id, err := base64.RawURLEncoding.DecodeString(enc); err == nil {
				threads[thread{agent, string(id)}] = true
			}
		})
		if err != nil {
			return err
		}
	}
	for k := range threads {
		if err := m.moveThread(ctx, k.agent, k.id); err != nil {
			return fmt.Errorf("thread %s/%s: %w", k.agent, k.id, err)
		}
		if err := m.renew(ctx); err != nil {
			return err
		}
	}

	// What is left of layout 2 in the active sets and lease indexes names
	// no thread record: drop it, so the scans read only layout-3 members.
	for n := range redisShards {
		tag := s.prefix + shardTag(n)
		active, err := s.client.SMembers(ctx, tag+":active").Result()
		if err != nil {
			return err
		}
		leases, err := s.client.ZRange(ctx, tag+":leases", 0, -1).Result()
		if err != nil {
			return err
		}
		for _, mem := range active {
			if _, err := parseThreadName(mem); err != nil {
				if err := s.client.SRem(ctx, tag+":active", mem).Err(); err != nil {
					return err
				}
			}
		}
		for _, mem := range leases {
			if _, err := parseThreadName(mem); err != nil {
				if err := s.client.ZRem(ctx, tag+":leases", mem).Err(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// moveThread moves one layout-2 thread (its record, journal, active-set
// and lease-index members) to the layout-3 keys of its record's principal.
func (m *layoutMigration) moveThread(ctx context.Context, agent, threadID string) error {
	s := m.s
	shard := s.prefix + shardTag(redisShard(shardName(agent, threadID)))
	old := shard + ":thread:" + layout2Name(agent, threadID)
	for range 5 {
		vals, err := s.client.HMGet(ctx, old, "version", "thread").Result()
		if err != nil {
			return err
		}
		version, _ := vals[0].(string)
		var rec struct {
			Principal string `json:"principal"`
		}
		if raw, ok := vals[1].(string); ok {
			if err := json.Unmarshal([]byte(raw), &rec); err != nil {
				return fmt.Errorf("decode: %w", err)
			}
		}
		k := ThreadKey{Agent: agent, Principal: rec.Principal, ThreadID: threadID}
		keys := []string{old, shard + ":journal:" + layout2Name(agent, threadID), s.activeKey(k), s.leasesKey(k),
			s.threadKey(k), s.journalKey(k)}
		moved, err := migrateLayout2Script.Run(ctx, s.client, keys, version, layout2Member(agent, threadID), threadName(k)).Int64()
		if err != nil || moved == 1 {
			return err
		}
	}
	return errors.New("the record kept changing while it was migrated (is a bridge of an older version still running?)")
}

// scan calls fn with every key matching pattern: on every primary of a
// Cluster, else on the one server.
func (s *RedisStore) scan(ctx context.Context, pattern string, fn func(key string)) error {
	each := func(ctx context.Context, c redis.Cmdable, fn func(string)) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			fn(iter.Val())
		}
		return iter.Err()
	}
	cc, ok := s.client.(*redis.ClusterClient)
	if !ok {
		return each(ctx, s.client, fn)
	}
	var mu sync.Mutex // ForEachMaster scans the primaries at once
	return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		return each(ctx, c, func(key string) {
			mu.Lock()
			defer mu.Unlock()
			fn(key)
		})
	})
}

// globEscape quotes the glob characters of a literal for SCAN MATCH.
func globEscape(lit string) string {
	var b strings.Builder
	for _, r := range lit {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
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
// JSON, its active-set member (T), "0" without an active run or else its lease
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

// trimScript is TrimJournal. KEYS: journal. ARGV: the lowest id to keep,
// lowered to the last entry's so that one stays. It returns how many went.
var trimScript = redis.NewScript(`
local tip = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if not tip then return 0 end
local keep = ARGV[1]
if tonumber(string.match(keep, '^%d+')) > tonumber(string.match(tip[1], '^%d+')) then keep = tip[1] end
return redis.call('XTRIM', KEYS[1], 'MINID', keep)
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

// indexScript is IndexInterrupt, a script only so that it goes through
// runScript like every write. KEYS: the interrupt's shard's index. ARGV:
// the interrupt's field, the thread's name.
var indexScript = redis.NewScript(`return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])`)

// runScript runs a writing script. With RedisOptions.WaitReplicas it
// sends WAIT right behind it on the same connection (a pipeline, on the
// primary that owns the keys), and reports a write that did not reach
// enough replicas in time as failed.
func (s *RedisStore) runScript(ctx context.Context, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	if s.waitReplicas <= 0 {
		return sc.Run(ctx, s.client, keys, args...)
	}
	var conn redis.Cmdable = s.client
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd
		}
		conn = node
	}
	run := func(eval func(p redis.Pipeliner) *redis.Cmd) (*redis.Cmd, *redis.Cmd) {
		var ev, wait *redis.Cmd
		// WAIT answers within its timeout; a primary that does not
		// answer at all (it is being demoted or fenced) fails the write
		// after a little more rather than hold it.
		ctx, cancel := context.WithTimeout(ctx, s.waitTimeout+redisWaitSlack)
		defer cancel()
		_, _ = conn.Pipelined(ctx, func(p redis.Pipeliner) error {
			ev = eval(p)
			wait = p.Do(ctx, "WAIT", s.waitReplicas, s.waitTimeout.Milliseconds())
			return nil
		})
		return ev, wait
	}
	ev, wait := run(func(p redis.Pipeliner) *redis.Cmd { return sc.EvalSha(ctx, p, keys, args...) })
	if redis.HasErrorPrefix(ev.Err(), "NOSCRIPT") { // it did not run: send the script itself
		ev, wait = run(func(p redis.Pipeliner) *redis.Cmd { return sc.Eval(ctx, p, keys, args...) })
	}
	if ev.Err() == nil {
		if n, err := wait.Int64(); err != nil {
			ev.SetErr(fmt.Errorf("wait for %d replicas: %w", s.waitReplicas, err))
		} else if n < int64(s.waitReplicas) {
			ev.SetErr(fmt.Errorf("%w: %d of %d replicas confirmed the write within %v", errTooFewReplicas, n, s.waitReplicas, s.waitTimeout))
		}
	}
	return ev
}

// redisWaitSlack is how much longer than WaitTimeout a write with WAIT
// may take.
const redisWaitSlack = 2 * time.Second

// errTooFewReplicas: a write ran on the primary but not enough replicas
// confirmed it (RedisOptions.WaitReplicas); a failover now could lose it.
var errTooFewReplicas = errors.New("too few replicas")

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
	th.Upgrade()
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
	store.Stamp(&rec, time.Now())
	rec.Version = th.Version + 1
	v, err := json.Marshal(&rec)
	if err != nil {
		return 0, fmt.Errorf("tasks: redis: put thread %s: %w", th.Key, err)
	}
	active := "0"
	switch {
	case th.Active != nil && th.Active.LeaseExpires.IsZero():
		active = "+inf" // never lapses: not the lease scan's
	case th.Active != nil:
		active = strconv.FormatInt(th.Active.LeaseExpires.UnixMilli(), 10)
	}
	args := make([]any, 0, 5+4*len(entries))
	args = append(args, strconv.FormatInt(th.Version, 10), strconv.FormatInt(rec.Version, 10), v, threadName(th.Key), active)
	args = entryArgs(args, entries)
	keys := []string{s.threadKey(th.Key), s.journalKey(th.Key), s.activeKey(th.Key), s.leasesKey(th.Key)}
	ok, err := s.runScript(ctx, putScript, keys, args...).Int64()
	if err != nil {
		return 0, fmt.Errorf("tasks: redis: put thread %s: %w", th.Key, err)
	}
	if ok == 0 {
		return 0, ErrConflict
	}
	return rec.Version, nil
}

// ActiveThreads implements Store: the shards' active sets, which the
// scripts keep equal to the records' ActiveRunID. One SMEMBERS per shard,
// pipelined.
func (s *RedisStore) ActiveThreads(ctx context.Context) ([]ThreadKey, error) {
	cmds := make([]*redis.StringSliceCmd, redisShards)
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for n := range redisShards {
			cmds[n] = p.SMembers(ctx, s.prefix+shardTag(n)+":active")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: redis: active threads: %w", err)
	}
	var out []ThreadKey
	for _, c := range cmds {
		for _, m := range c.Val() {
			k, err := parseThreadName(m)
			if err != nil {
				return nil, fmt.Errorf("tasks: redis: active threads: %w", err)
			}
			out = append(out, k)
		}
	}
	return out, nil
}

// redisLapsedPerShard is how many lapsed leases one scan lists per shard:
// about a thousand a scan in all; the next scan gets the rest.
const redisLapsedPerShard = 8

// LapsedLeases implements LeaseLister: one ZRANGE BYSCORE per shard's
// lease index, pipelined, so a scan costs the lapsed runs, not all active
// ones, and on a Cluster spreads over every primary.
func (s *RedisStore) LapsedLeases(ctx context.Context, now time.Time) ([]ThreadKey, error) {
	cmds := make([]*redis.StringSliceCmd, redisShards)
	stop := strconv.FormatInt(now.UnixMilli(), 10)
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for n := range redisShards {
			cmds[n] = p.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.prefix + shardTag(n) + ":leases", ByScore: true,
				Start: "-inf", Stop: stop, Count: redisLapsedPerShard})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: redis: lapsed leases: %w", err)
	}
	var out []ThreadKey
	for _, c := range cmds {
		for _, m := range c.Val() {
			k, err := parseThreadName(m)
			if err != nil {
				return nil, fmt.Errorf("tasks: redis: lapsed leases: %w", err)
			}
			out = append(out, k)
		}
	}
	return out, nil
}

var _ LeaseLister = (*RedisStore)(nil)

// DeleteThread implements Store. The journal stays.
func (s *RedisStore) DeleteThread(ctx context.Context, key ThreadKey, version int64) error {
	keys := []string{s.threadKey(key), s.activeKey(key), s.leasesKey(key)}
	r, err := s.runScript(ctx, deleteScript, keys, strconv.FormatInt(version, 10), threadName(key)).Int64()
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
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.waitReplicas > 0 {
		// Each write waits for its replicas on its own (runScript).
		return s.appendResult(key, s.runScript(ctx, appendScript, []string{s.journalKey(key)},
			entryArgs(make([]any, 0, 4*len(entries)), entries)...))
	}
	req := &redisAppend{ctx: ctx, key: key, args: entryArgs(make([]any, 0, 4*len(entries)), entries), done: make(chan error, 1)}
	// As the embedded store's group commit (store.GroupWriter).
	s.appends.Add(req)
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		// The append may still be written: as with any write whose
		// answer was lost, the caller cannot tell.
		return ctx.Err()
	}
}

// redisAppend is one Append waiting to be sent.
type redisAppend struct {
	ctx  context.Context
	key  ThreadKey
	args []any
	done chan error
}

// sendAppends sends the Appends waiting now, to any journals, as one
// pipeline: one round trip, one write and one read on the connection, for
// every run streaming at that moment, instead of one each (the appends'
// Write). Appends whose caller gave up before they were sent are not sent.
func (s *RedisStore) sendAppends(group []*redisAppend) {
	live := group[:0]
	var deadline time.Time
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		if d, ok := r.ctx.Deadline(); ok && d.After(deadline) {
			deadline = d
		}
		live = append(live, r)
	}
	if len(live) > 0 {
		// The pipeline serves every caller: it is bounded by the latest of
		// their deadlines, not cut short by the first to give up.
		if deadline.IsZero() {
			deadline = time.Now().Add(redisPipelineTimeout)
		}
		ctx, cancel := context.WithDeadline(context.WithoutCancel(live[0].ctx), deadline)
		cmds := make([]*redis.Cmd, len(live))
		_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, r := range live {
				cmds[i] = appendScript.EvalSha(ctx, p, []string{s.journalKey(r.key)}, r.args...)
			}
			return nil
		})
		cancel()
		for i, r := range live {
			cmd := cmds[i]
			if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
				// Redis lost its scripts (a restart): send this one with
				// the script itself.
				cmd = s.runScript(r.ctx, appendScript, []string{s.journalKey(r.key)}, r.args...)
			}
			r.done <- s.appendResult(r.key, cmd)
		}
	}
}

// redisPipelineTimeout bounds a pipeline of Appends none of whose callers
// gave a deadline.
const redisPipelineTimeout = 10 * time.Second

// appendResult reads appendScript's answer.
func (s *RedisStore) appendResult(key ThreadKey, cmd *redis.Cmd) error {
	ok, err := cmd.Int64()
	if err != nil {
		return fmt.Errorf("tasks: redis: append to journal %s: %w", key, err)
	}
	if ok == 0 {
		return ErrConflict
	}
	return nil
}

// TrimJournal implements Store: XTRIM MINID, exact, so nothing after upTo
// goes, and never the stream's last entry (the script's bound), whose ID
// the next XADD is checked against.
func (s *RedisStore) TrimJournal(ctx context.Context, key ThreadKey, upTo int64) error {
	if upTo < 1 {
		return nil
	}
	if err := s.runScript(ctx, trimScript, []string{s.journalKey(key)}, seqID(upTo+1)).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("tasks: redis: trim journal %s: %w", key, err)
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
	if store.JournalGone(last, after) {
		return ErrNotFound // purged
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
	if err := s.runScript(ctx, indexScript, []string{s.interruptsKey(id)}, interruptField(key.Principal, id), threadName(key)).Err(); err != nil {
		return fmt.Errorf("tasks: redis: index interrupt %s: %w", id, err)
	}
	return nil
}

// InterruptThread implements Store.
func (s *RedisStore) InterruptThread(ctx context.Context, principal, id string) (ThreadKey, error) {
	m, err := s.client.HGet(ctx, s.interruptsKey(id), interruptField(principal, id)).Result()
	if errors.Is(err, redis.Nil) {
		return ThreadKey{}, ErrNotFound
	}
	if err != nil {
		return ThreadKey{}, fmt.Errorf("tasks: redis: interrupt %s: %w", id, err)
	}
	key, err := parseThreadName(m)
	if err != nil {
		return ThreadKey{}, fmt.Errorf("tasks: redis: interrupt %s: %w", id, err)
	}
	return key, nil
}

// Ping implements Store.
func (s *RedisStore) Ping(ctx context.Context) error {
	if err := s.pinger.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("tasks: redis: ping %s: %w", s.addr, err)
	}
	// The pinger's pool and client's recover from an outage apart: each
	// refuses to dial, after its dials failed, until its own probe (once a
	// second) reaches Redis. A client left with no connection may still be
	// refusing while the pinger is through, and would turn the first runs
	// away (store_unavailable) from an instance that says it is ready. With
	// connections in its pool it is past that, and a busy pool must not make
	// an instance unready.
	if s.client.PoolStats().TotalConns == 0 {
		if err := s.client.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("tasks: redis: ping %s: %w", s.addr, err)
		}
	}
	return nil
}

// Close ends every Wait, waits for the store's goroutines and closes its
// connections. Calling it again does nothing.
func (s *RedisStore) Close() error {
	s.closeOnce.Do(func() {
		werr := s.waits.close()
		if err := errors.Join(werr, s.client.Close(), s.pinger.Close()); err != nil {
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
	client redis.UniversalClient // blocking XREADs only
	kicker redis.UniversalClient // the store's pool, for wake-stream XADDs
	// wakePrefix starts the wake streams of the shards of a group.
	wakePrefix func(group string) string
	// group says which journals may share an XREAD: those of one group.
	// nil: any (one server); on a Cluster, those of one hash tag.
	group     func(journal string) string
	maxShards int
	addr      string

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
	group   string
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

func newRedisWaits(ctx context.Context, client, kicker redis.UniversalClient, addr string,
	wakePrefix func(string) string, group func(string) string, maxShards int) *redisWaits {
	if group == nil {
		group = func(string) string { return "" }
	} else {
		// One shard per group at least, whatever the cap.
		maxShards += redisShards
	}
	ws := &redisWaits{
		client: client, kicker: kicker, wakePrefix: wakePrefix, group: group, maxShards: maxShards,
		addr:     addr,
		assigned: make(map[string]*redisWaitShard),
		journals: make(map[*redisWaitShard]int),
		start:    make(chan *redisWaitShard, maxShards+redisShards),
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
// does: the first of its group with room, else a new one, else (all
// maxShards started) the least loaded of its group. ws.mu is held.
func (ws *redisWaits) shardFor(jk string) *redisWaitShard {
	if sh := ws.assigned[jk]; sh != nil {
		return sh
	}
	group := ws.group(jk)
	var pick, least *redisWaitShard
	for _, sh := range ws.shards {
		if sh.group != group {
			continue
		}
		if n := ws.journals[sh]; n < redisWaitJournalsPerConn {
			pick = sh
			break
		}
		if least == nil || ws.journals[sh] < ws.journals[least] {
			least = sh
		}
	}
	if pick == nil && (least == nil || len(ws.shards) < ws.maxShards) {
		pick = &redisWaitShard{
			waits:    ws,
			group:    group,
			wakeKey:  ws.wakePrefix(group) + strconv.Itoa(len(ws.shards)),
			watched:  make(map[string]*redisWatch),
			pending:  make(chan struct{}, 1),
			lastWake: "0-0",
		}
		ws.shards = append(ws.shards, pick)
		ws.start <- pick // never blocks: room for every shard there can be
	} else if pick == nil {
		pick = least
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
// waking the Waits each answer satisfies. Each XREAD holds a connection of
// the wait pool while it blocks.
func (sh *redisWaitShard) run(ctx context.Context) {
	ws := sh.waits
	var backoff time.Duration
	for {
		streams := sh.next()
		if streams == nil {
			select {
			case <-sh.pending:
				continue
			case <-ws.done:
				return
			}
		}
		res, err := ws.client.XRead(ctx, &redis.XReadArgs{Streams: streams, Count: 1, Block: redisWaitBlock}).Result()
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
		// told. Try again after a pause rather than spin.
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
