package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/a2a-agui-bridge/bridge/observe"
	"github.com/a2a-agui-bridge/bridge/tasks"
)

// sweepEvery is how often the retention sweep looks for expired threads
// (or every idleThreadTTL, when shorter).
const sweepEvery = time.Minute

// sweepIdle deletes threads idle for longer than ttl (store.retention.
// idleThreadTTL) until ctx ends: each tick up to tasks.SweepBatch of them,
// and at once another batch while a tick found a full one, so a backlog
// drains without one tick holding the store for long.
func sweepIdle(ctx context.Context, svc *tasks.Service, ttl time.Duration, m *observe.Metrics, log *slog.Logger) {
	tick := time.NewTicker(min(sweepEvery, ttl))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for ctx.Err() == nil {
			n, err := svc.SweepIdle(ctx, time.Now(), ttl)
			if m != nil && n > 0 {
				m.ThreadsExpired(n)
			}
			if err != nil {
				log.Warn("retention sweep", "err", err)
			}
			if n > 0 {
				log.Info("retention sweep deleted idle threads", "threads", n)
			}
			if err != nil || n < tasks.SweepBatch {
				break
			}
		}
	}
}
