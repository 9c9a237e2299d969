package tasks

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
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
	return s.lease > 0 && a != nil && a.Owner != s.instance &&
		!a.LeaseExpires.IsZero() && time.Now().After(a.LeaseExpires)
}

// owns reports whether runID is th's active run and this instance runs it.
func (s *Service) owns(th *Thread, runID string) bool {
	return th.Running(runID) && th.Active.Owner == s.instance
}

// scanLeases adopts, every lease/2 (jittered, so that instances started
// together do not scan together), the runs whose lease lapsed, until Close.
func (s *Service) scanLeases() {
	defer close(s.scanDone)
	wait := time.Duration(0) // a starting instance adopts at once
	for {
		select {
		case <-s.stopScan:
			return
		case <-time.After(wait):
		}
		s.adoptLapsed()
		half := s.lease / 2
		wait = half - half/4 + rand.N(half/2+1)
	}
}

// adoptLapsed runs one scan.
func (s *Service) adoptLapsed() {
	ctx, cancel := context.WithTimeout(s.ctx, max(s.lease/2, time.Second))
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
	for _, key := range keys {
		if _, err := s.takeOver(ctx, key); err != nil && !errors.Is(err, ErrShuttingDown) {
			s.log.Error("adopt run", "agent", key.Agent, "thread_id", key.ThreadID, "err", err)
		}
	}
}

// adoptSoon adopts key's run in the background (a request found its lease
// lapsed).
func (s *Service) adoptSoon(key ThreadKey) {
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.wg.Add(1) // Close waits for the adoption
	}
	s.mu.Unlock()
	if closing {
		return
	}
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		defer cancel()
		if _, err := s.takeOver(ctx, key); err != nil && !errors.Is(err, ErrShuttingDown) {
			s.log.Error("adopt run", "agent", key.Agent, "thread_id", key.ThreadID, "err", err)
		}
	}()
}

// keepLease renews the run's lease every lease/3 until the run releases its
// thread or the bridge stops. If another instance adopted the run meanwhile
// (this one could not renew in time), the run stops with errLeaseLost.
func (d *driver) keepLease(stop context.CancelCauseFunc) {
	defer d.leasing.Done()
	tick := time.NewTicker(d.svc.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-d.finishing:
			return
		case <-d.svc.ctx.Done():
			return
		case <-tick.C:
		}
		if !d.renew() {
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
// instance's. A store error keeps the lease as it is: the next tick tries
// again, and a lease that lapses meanwhile is adopted, as it should be when
// this instance cannot reach the store.
func (d *driver) renew() bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.svc.ctx), d.svc.lease/3)
	defer cancel()
	ours := false
	cur, _, err := d.svc.updateThread(ctx, d.thread.Key, nil, func(cur *Thread) bool {
		ours = d.svc.owns(cur, d.in.RunID)
		if ours {
			cur.Active.LeaseExpires = time.Now().Add(d.svc.lease)
		}
		return ours
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return false
	case err != nil:
		if !errors.Is(err, ErrConflict) {
			d.log.Warn("renew lease", "err", err)
		}
		return true
	case !ours:
		return false
	}
	d.noticeCancel(ctx, cur)
	return true
}

// noticeCancel takes a cancel request another instance recorded on the
// thread: that instance sent CancelTask (the task was known), so this run
// only checks the task's state and, once it is cancelled, gives the
// agent's stream the usual grace period to say so.
func (d *driver) noticeCancel(ctx context.Context, cur *Thread) {
	if !cur.Active.CancelRequested || cur.Active.TaskID == "" || d.team != nil || d.agent == nil || d.cancelledTask() != nil {
		return
	}
	c, cancel := context.WithTimeout(ctx, d.spec.RequestTimeout)
	defer cancel()
	task, err := d.agent.GetTask(c, a2a.TaskID(cur.Active.TaskID))
	if err != nil {
		return
	}
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
