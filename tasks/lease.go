package tasks

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/internal/retry"
	"github.com/a2a-agui-bridge/bridge/tasks/journal"
)

// Leases let several bridge instances share one store (Redis). A run's
// thread record names its owner instance and when the owner's claim lapses
// (Thread.LeaseExpires); the owner renews it every lease/3 while the run
// lives. Every instance scans, every lease/2 or so, for active runs whose
// lease lapsed — their instance died — and adopts them exactly as a
// restarted process takes over the runs its predecessor left (takeOver):
// the claim is an optimistic write, so of several instances scanning at once
// one wins, and the journal is continued from its last sequence number, so
// nothing is lost or written twice. All lease changes go through the
// store's optimistic versioning, so the same code is correct on every
// backend.

// errLeaseLost is the cause set on a run's context when another instance
// adopted the run: this one must stop without touching the thread.
var errLeaseLost = errors.New("another bridge instance adopted the run")

// leaseLapsed reports whether th's active run belongs to another instance
// whose lease has lapsed.
func (s *Service) leaseLapsed(th *Thread) bool {
	a := th.Active
	return s.opt.Lease > 0 && a != nil && a.Owner != s.opt.Instance &&
		!a.LeaseExpires.IsZero() && time.Now().After(a.LeaseExpires)
}

// owns reports whether runID is th's active run and this instance runs it.
func (s *Service) owns(th *Thread, runID string) bool {
	return th.Running(runID) && th.Active.Owner == s.opt.Instance
}

// scanLeases adopts, every lease/2 (jittered, so that instances started
// together do not scan together), the runs whose lease lapsed, until Close.
func (s *Service) scanLeases() {
	defer close(s.scanDone)
	wait := time.Duration(0) // a starting instance adopts at once
	for {
		if !retry.Sleep(wait, s.stopScan, nil) {
			return
		}
		s.adoptLapsed()
		half := s.opt.Lease / 2
		wait = half - half/4 + rand.N(half/2+1)
	}
}

// adoptLapsed runs one scan.
func (s *Service) adoptLapsed() {
	ctx, cancel := context.WithTimeout(s.ctx, max(s.opt.Lease/2, time.Second))
	defer cancel()
	var keys []ThreadKey
	var err error
	if l, ok := s.store.(LeaseLister); ok {
		keys, err = l.LapsedLeases(ctx, time.Now())
	} else {
		keys, err = s.store.ActiveThreads(ctx)
	}
	if err != nil {
		s.log.Warn("lease scan", "err", err)
		return
	}
	s.forgetLapsed(keys)
	for _, key := range keys {
		if _, err := s.takeOver(ctx, key); err != nil && !errors.Is(err, ErrShuttingDown) {
			s.log.Error("adopt run", "agent", key.Agent, "thread_id", key.ThreadID, "err", err)
		}
	}
}

// adoptSoon adopts key's run in the background (a request found its lease
// lapsed).
func (s *Service) adoptSoon(key ThreadKey) { s.adoptAfter(key, 0) }

// keepLease renews the run's lease every lease/3 until the run releases its
// thread or the bridge stops. If another instance adopted the run meanwhile
// (this one could not renew in time), the run stops with errLeaseLost.
func (d *driver) keepLease(stop context.CancelCauseFunc) {
	defer d.leasing.Done()
	next := d.svc.opt.Lease / 3
	for {
		if !retry.Sleep(next, d.finishing, d.svc.ctx.Done()) {
			return
		}
		ours, failed := d.renew()
		// After a failed renewal (the store is out) try again soon rather
		// than a third of a lease later: a run that rode an outage out
		// (Options.StoreOutage, half a lease) must renew as soon as the
		// store is back, before what is left of its lease runs out.
		next = d.svc.opt.Lease / 3
		if failed {
			next = d.svc.releaseRetryMax()
		}
		if !ours {
			d.mu.Lock()
			released := d.phase.threadReleased()
			d.leaseLost = !released
			d.mu.Unlock()
			if released {
				return // the run was refused and released meanwhile
			}
			d.log.Warn("the run's lease was taken by another instance; leaving the run to it")
			stop(errLeaseLost)
			return
		}
	}
}

// renew extends the lease; it returns false once the run is no longer this
// instance's. A store error keeps the lease as it is (failed): the next
// tick tries again, and a lease that lapses meanwhile is adopted, as it
// should be when this instance cannot reach the store.
func (d *driver) renew() (ours, failed bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.svc.ctx), d.svc.opt.Lease/3)
	defer cancel()
	cur, _, err := d.svc.updateThread(ctx, d.thread.Key, nil, func(cur *Thread) bool {
		ours = d.svc.owns(cur, d.in.RunID)
		if ours {
			cur.Active.LeaseExpires = time.Now().Add(d.svc.opt.Lease)
		}
		return ours
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return false, false
	case err != nil:
		failed = !errors.Is(err, ErrConflict)
		if failed {
			d.log.Warn("renew lease", "err", err)
		}
		return true, failed
	case !ours:
		return false, false
	}
	d.noticeCancel(ctx, cur)
	return true, false
}

// releaseRetryMax is the longest pause between a run's attempts to renew
// its lease or to release its thread while the store is out: an eighth
// of a lease, well below the adoption grace (lapseGrace), so that an
// instance that is alive always writes before another adopts its run.
func (s *Service) releaseRetryMax() time.Duration {
	if s.opt.Lease > 0 {
		return max(min(journal.RetryMax, s.opt.Lease/8), journal.RetryFirst)
	}
	return journal.RetryMax
}

// lapseGrace is how long a run's record must stay unchanged with its
// lease lapsed before another instance adopts it. A lapsed lease means
// the owner died — or that the store was out for longer than a lease, and
// the owner, alive, is about to write (renew, or release a run it ended
// with store_unavailable). The grace gives it that chance: it retries
// every releaseRetryMax, a fraction of the grace, so its write changes the
// record's version first and the adoption is called off. A dead owner's
// run is adopted lapseGrace later than without it.
func (s *Service) lapseGrace() time.Duration { return s.opt.Lease / 4 }

// lapsedLongEnough reports whether key's record, at version, has been
// seen with its lease lapsed for lapseGrace; otherwise it remembers the
// sighting and says how long is left, after which the caller looks again.
func (s *Service) lapsedLongEnough(key ThreadKey, version int64) (bool, time.Duration) {
	s.lapsedMu.Lock()
	defer s.lapsedMu.Unlock()
	seen, ok := s.lapsed[key]
	if !ok || seen.version != version {
		seen = lapsedSighting{version: version, at: time.Now()}
		s.lapsed[key] = seen
	}
	if left := s.lapseGrace() - time.Since(seen.at); left > 0 {
		return false, left
	}
	delete(s.lapsed, key)
	return true, 0
}

// adoptAfter adopts key's run in the background after wait (the rest of
// its lapseGrace, rather than at the next scan, so that the grace delays
// the adoption of a dead instance's run by itself only; 0: at once). Close
// waits for it.
func (s *Service) adoptAfter(key ThreadKey, wait time.Duration) {
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if closing {
		return
	}
	go func() {
		defer s.wg.Done()
		if wait > 0 && !retry.Sleep(wait, s.stopScan, nil) {
			return
		}
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		defer cancel()
		if _, err := s.takeOver(ctx, key); err != nil && !errors.Is(err, ErrShuttingDown) {
			s.log.Error("adopt run", "agent", key.Agent, "thread_id", key.ThreadID, "err", err)
		}
	}()
}

// forgetLapsed drops the sightings of threads a scan no longer lists.
func (s *Service) forgetLapsed(listed []ThreadKey) {
	keep := make(map[ThreadKey]bool, len(listed))
	for _, k := range listed {
		keep[k] = true
	}
	s.lapsedMu.Lock()
	defer s.lapsedMu.Unlock()
	for k := range s.lapsed {
		if !keep[k] {
			delete(s.lapsed, k)
		}
	}
}

// lapsedSighting is when a scan first saw a record's lease lapsed.
type lapsedSighting struct {
	version int64
	at      time.Time
}

// noticeCancel takes a cancel request another instance recorded on the
// thread: that instance sent CancelTask for the tasks it knew, so this run
// only checks their states and, once one is cancelled, gives its member's
// stream the usual grace period to say so.
func (d *driver) noticeCancel(ctx context.Context, cur *Thread) {
	if !cur.Active.CancelRequested {
		return
	}
	for _, id := range cur.Active.Tasks {
		d.mu.Lock()
		m := d.following[a2a.TaskID(id)]
		d.mu.Unlock()
		if m == nil || d.cancelledTask(a2a.TaskID(id)) != nil {
			continue
		}
		if task, err := getTask(ctx, m.agent, m.spec.RequestTimeout, a2a.TaskID(id)); err == nil {
			d.cancelAccepted(task)
		}
	}
}

// noteTask records task id of member on the thread's running run (see
// crew.noteTask), and sends the cancel requested before it was known.
func (d *driver) noteTask(member string, spec *AgentSpec, agent Agent, id a2a.TaskID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.svc.ctx), 10*time.Second)
	defer cancel()
	ours := false
	cur, _, err := d.svc.updateThread(ctx, d.thread.Key, nil, func(cur *Thread) bool {
		ours = cur.Running(d.in.RunID)
		if !ours || cur.Active.Tasks[member] == string(id) {
			return false
		}
		if cur.Active.Tasks == nil {
			cur.Active.Tasks = map[string]string{}
		}
		cur.Active.Tasks[member] = string(id)
		return true
	})
	if err != nil {
		d.log.Warn("record the run's task", "member", member, "err", err)
		return
	}
	if !ours || !cur.Active.CancelRequested {
		return
	}
	task, err := cancelTask(d.detached(), agent, spec.RequestTimeout, id)
	if err != nil {
		d.log.Warn("cancel requested before the task was known; the agent did not cancel it", "member", member, "err", err)
		return
	}
	d.log.Info("cancelled the task as requested", "member", member)
	d.cancelAccepted(task)
}

// handOver ends the lease of a run suspended by a shutdown, so another
// instance's next scan adopts it instead of waiting for the lease to
// lapse. Failing that, it lapses as after a crash.
func (d *driver) handOver() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.svc.ctx), 5*time.Second)
	defer cancel()
	_, _, _ = d.svc.updateThread(ctx, d.thread.Key, nil, func(cur *Thread) bool {
		if !d.svc.owns(cur, d.in.RunID) {
			return false
		}
		cur.Active.LeaseExpires = time.Now()
		return true
	})
}
