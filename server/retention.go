package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks"
)

// sweepEvery is how often the retention sweep looks for expired threads
// (or every idleThreadTTL, when shorter).
const sweepEvery = time.Minute

// sweepIdle deletes threads idle for longer than ttl (store.retention.
// idleThreadTTL) until ctx ends: each tick up to sweepBatch of them,
// and at once another batch while a tick found a full one, so a backlog
// drains without one tick holding the store for long.
func sweepIdle(ctx context.Context, st tasks.Store, ttl time.Duration, m *observe.Metrics, log *slog.Logger) {
	tick := time.NewTicker(min(sweepEvery, ttl))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for ctx.Err() == nil {
			n, err := sweepOnce(ctx, st, time.Now(), ttl)
			if m != nil && n > 0 {
				m.ThreadsExpired(n)
			}
			if err != nil {
				log.Warn("retention sweep", "err", err)
			}
			if n > 0 {
				log.Info("retention sweep deleted idle threads", "threads", n)
			}
			if err != nil || n < sweepBatch {
				break
			}
		}
	}
}

// sweepBatch bounds how many threads one sweepOnce deletes.
const sweepBatch = 100

// sweepOnce deletes up to sweepBatch threads without a run whose last
// activity is older than ttl at now, and reports how many it deleted. Each
// goes only at the version it was listed with: a thread touched since, by
// this instance or another on a shared store, stays. A run this process
// drives keeps its thread active in the record, so it is never listed.
func sweepOnce(ctx context.Context, st tasks.Store, now time.Time, ttl time.Duration) (int, error) {
	idle, err := st.IdleThreads(ctx, now.Add(-ttl), sweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range idle {
		switch err := st.PurgeThread(ctx, t.Key, t.Version); {
		case err == nil:
			n++
		case errors.Is(err, tasks.ErrConflict), errors.Is(err, tasks.ErrNotFound):
		default:
			return n, err
		}
	}
	return n, nil
}
