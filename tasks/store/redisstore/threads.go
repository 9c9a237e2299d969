package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// The thread list, count and retention sweep of the Redis store read the
// records themselves, found by a SCAN of the thread keys: their cost grows
// with every thread stored, not with the page. A per-principal index kept
// by the put script (one sorted set per shard and principal, scored by
// last activity) is what a store of many threads needs; until then these
// suit stores of thousands of threads, not millions.

// eachThread calls fn with every stored thread whose key passes keep.
func (s *RedisStore) eachThread(ctx context.Context, keep func(ThreadKey) bool, fn func(*Thread)) error {
	var keys []string
	err := s.scan(ctx, globEscape(s.prefix)+"{*}:thread:*", func(k string) { keys = append(keys, k) })
	if err != nil {
		return err
	}
	for _, k := range keys {
		_, name, ok := strings.Cut(k, "}:thread:")
		if !ok {
			continue
		}
		key, err := parseThreadName(name)
		if err != nil || !keep(key) {
			continue
		}
		th, err := s.GetThread(ctx, key)
		if errors.Is(err, ErrNotFound) {
			continue // purged since the scan
		}
		if err != nil {
			return err
		}
		fn(th)
	}
	return nil
}

// ListThreads implements Store.
func (s *RedisStore) ListThreads(ctx context.Context, q store.ListQuery) (store.ThreadPage, error) {
	var after *store.ThreadSummary
	if q.Cursor != "" {
		c, err := store.ParseCursor(q.Cursor)
		if err != nil {
			return store.ThreadPage{}, err
		}
		after = &c
	}
	var out []store.ThreadSummary
	err := s.eachThread(ctx, func(k ThreadKey) bool { return k.Principal == q.Principal && q.Wants(k.Agent) }, func(th *Thread) {
		sum := store.Summarize(th, th.Version)
		if after == nil || store.CompareSummaries(*after, sum) < 0 {
			out = append(out, sum)
		}
	})
	if err != nil {
		return store.ThreadPage{}, fmt.Errorf("tasks: redis: list threads: %w", err)
	}
	slices.SortFunc(out, store.CompareSummaries)
	return store.Page(out, max(q.Limit, 1)), nil
}

// CountThreads implements Store.
func (s *RedisStore) CountThreads(ctx context.Context, principal string) (int, error) {
	n := 0
	err := s.eachThread(ctx, func(k ThreadKey) bool { return k.Principal == principal }, func(*Thread) { n++ })
	if err != nil {
		return 0, fmt.Errorf("tasks: redis: count threads: %w", err)
	}
	return n, nil
}

// IdleThreads implements Store.
func (s *RedisStore) IdleThreads(ctx context.Context, before time.Time, limit int) ([]store.ThreadSummary, error) {
	var out []store.ThreadSummary
	err := s.eachThread(ctx, func(ThreadKey) bool { return true }, func(th *Thread) {
		if th.Active == nil && th.UpdatedAt.Before(before) {
			out = append(out, store.Summarize(th, th.Version))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: redis: idle threads: %w", err)
	}
	slices.SortFunc(out, func(a, b store.ThreadSummary) int { return -store.CompareSummaries(a, b) })
	return out[:min(len(out), limit)], nil
}

// purgeScript is PurgeThread. KEYS: thread, journal, active set, leases.
// ARGV: expected version ("0": any), active-set member. It returns 1, 0 on
// a conflict (nothing removed), -1 when no record was stored (the journal
// is removed all the same).
var purgeScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'version')
if v and ARGV[1] ~= '0' and v ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
if not v then return -1 end
return 1
`)

// unindexScript removes an interrupt index entry if it still names the
// thread. KEYS: the index. ARGV: field, thread name.
var unindexScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
`)

// PurgeThread implements Store: the thread's keys in one script (one
// slot), then its interrupt index entries, which live in the shards of
// their ids. A crash between the two leaves entries naming a thread that
// is gone: a resume with one is refused as one with an unknown id.
func (s *RedisStore) PurgeThread(ctx context.Context, key ThreadKey, version int64) error {
	th, err := s.GetThread(ctx, key)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	name := threadName(key)
	keys := []string{s.threadKey(key), s.journalKey(key), s.activeKey(key), s.leasesKey(key)}
	r, err := s.runScript(ctx, purgeScript, keys, strconv.FormatInt(version, 10), name).Int64()
	if err != nil {
		return fmt.Errorf("tasks: redis: purge thread %s: %w", key, err)
	}
	switch r {
	case 0:
		return ErrConflict
	case -1:
		return ErrNotFound
	}
	if th != nil {
		for _, id := range store.InterruptIDs(th) {
			if err := s.runScript(ctx, unindexScript, []string{s.interruptsKey(id)}, interruptField(key.Principal, id), name).Err(); err != nil {
				return fmt.Errorf("tasks: redis: purge thread %s: interrupt index: %w", key, err)
			}
		}
	}
	return nil
}
