package tasks

import (
	"context"
	"errors"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/internal/retry"
	"github.com/a2a-agui-bridge/bridge/tasks/journal"
)

// follow registers m as following task id, for cancelAccepted; a cancel
// the agent accepted already starts its grace period now.
func (d *driver) follow(m *memberRun, id a2a.TaskID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.following[id] = m
	d.armGrace(id)
}

// cancelAccepted takes the agent's answer to CancelTask. Once the agent
// says the task is cancelled, the member's stream has the grace period to
// report that itself (with whatever else it sends last); after it, the
// member's part ends cancelled on the strength of the answer, so a stream
// that keeps going or stays silent cannot keep the run open.
func (d *driver) cancelAccepted(task *a2a.Task) {
	if task == nil || task.Status.State != a2a.TaskStateCanceled {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancelled[task.ID] != nil {
		return
	}
	d.cancelled[task.ID] = task
	d.armGrace(task.ID)
}

// armGrace starts the grace period of task id once both the agent's
// answer and the member following it are known, once; d.mu is held.
func (d *driver) armGrace(id a2a.TaskID) {
	m := d.following[id]
	if m == nil || d.cancelled[id] == nil {
		return
	}
	delete(d.following, id)
	d.graces = append(d.graces, time.AfterFunc(d.svc.opt.CancelGrace, func() { m.stop(errCancelGrace) }))
}

// disarm stops the grace periods still running when the run ends.
func (d *driver) disarm() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.graces {
		t.Stop()
	}
}

// cancelledTask is the agent's answer to CancelTask for the first of ids
// it answered.
func (d *driver) cancelledTask(ids ...a2a.TaskID) *a2a.Task {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		if t := d.cancelled[id]; t != nil {
			return t
		}
	}
	return nil
}

// emit checks events against the client's verifier, numbers them and
// queues them for the journal, which shows them to the readers in this
// process once stored. An event the verifier would reject is a bridge bug:
// the run ends with RUN_ERROR instead of sending the client something it
// cannot read.
//
// The terminal event is journaled in the same store write that releases
// the thread, after everything before it: a client that starts its next
// run the moment it reads RUN_FINISHED is not refused as busy, and a crash
// cannot leave a released thread without its run's end or an ended run
// holding its thread.
func (d *driver) emit(events []agui.Event) {
	if len(events) == 0 {
		return
	}
	entries := make([]Entry, 0, len(events))
	for _, e := range events {
		if d.guard.Terminated() {
			break
		}
		if err := d.guard.Check(e); err != nil {
			d.log.Error("translator produced an invalid event", "type", e.Type(), "err", err)
			e = &agui.RunError{Message: "the bridge produced an invalid event sequence", Code: agui.CodeInternal}
			if d.guard.Check(e) != nil {
				break
			}
		}
		b, err := agui.Marshal(e)
		if err != nil {
			d.log.Error("encode event", "type", e.Type(), "err", err)
			continue
		}
		t := e.Type()
		if o := d.spec.Observer; o != nil {
			o.Event(t)
		}
		if t == agui.EventRunFinished || t == agui.EventRunError {
			d.outcome, d.code = outcomeOf(e)
		}
		d.seq++
		d.journaled += int64(len(b))
		d.budget.Journal(t, len(b))
		entries = append(entries, Entry{Seq: d.seq, RunID: d.in.RunID, Event: b,
			Terminal: t == agui.EventRunFinished || t == agui.EventRunError})
	}
	n := len(entries)
	if n == 0 {
		return
	}
	if entries[n-1].Terminal {
		d.journal.Add(entries[:n-1])
		if err := d.journal.Flush(); err != nil {
			// The journal lost events: say so rather than end as if the
			// run were whole. The end keeps its number, after the events
			// given up: a write whose answer was lost may have landed, and
			// the end must not collide with it (the journal then has a gap,
			// or events no client was shown, before the end).
			f := storeFailure()
			if b, merr := agui.Marshal(f); merr == nil {
				entries[n-1].Event = b
				d.outcome, d.code = OutcomeError, f.Code
			}
		}
		d.finalize(d.journal.Renumbered(entries[n-1]))
		return
	}
	d.journal.Add(entries)
	d.keepUp()
}

// keepUp holds the run back while more than journal.MaxPending of its events wait
// for the store, and fails the run once the journal lost a batch.
func (d *driver) keepUp() {
	pending, err := d.journal.Progress()
	if err == nil && pending > journal.MaxPending {
		err = d.journal.Flush()
	}
	if err != nil && !d.storeFailed && !d.crew.out.Done() {
		d.storeFailed = true
		f := storeFailure()
		d.emit(d.crew.cut(f.Code, f.Message))
	}
}

// storeFailure ends a run whose journal lost events.
func storeFailure() *agui.RunError {
	return &agui.RunError{Code: agui.CodeStoreUnavailable, Message: "the bridge's store was unavailable for too long to record this run's events, so the run stopped; the agent's task may go on",
		Base: agui.Base{Timestamp: time.Now().UnixMilli()}}
}

// suspend leaves the run to the next bridge process: what it produced is
// journaled, the thread keeps it as active (with its task), and readers in
// this process get the shutdown notice instead of a terminal event.
func (d *driver) suspend() {
	d.suspendWith(agui.CodeServerShutdown, "the bridge is shutting down; the agent's task goes on and this run continues after the restart: read it at /agents/{name}/threads/{threadId}/events after the last id you saw")
	if d.svc.opt.Lease > 0 {
		d.handOver()
		d.log.Info("run suspended by the shutdown; its lease ends now, for another instance to adopt it")
		return
	}
	d.log.Info("run suspended by the shutdown; the next start takes it over")
}

// leave stops a run another instance adopted (this one's lease lapsed):
// like a shutdown, the thread is left as it is, to the adopter, and readers
// in this process are told to follow the run's journal.
func (d *driver) leave(cause error) {
	if errors.Is(cause, errThreadDeleted) {
		d.suspendWith(agui.CodeThreadDeleted, "the thread was deleted") // threadlife.go
		return
	}
	d.suspendWith(agui.CodeServerShutdown, "this bridge instance lost the run to another instance, which continues it: read it at /agents/{name}/threads/{threadId}/events after the last id you saw")
	d.log.Warn("run left to the instance that adopted it")
}

func (d *driver) suspendWith(code, message string) {
	d.journal.Flush()
	var tail []agui.Envelope
	for _, e := range d.crew.cut(code, message) {
		if d.guard.Check(e) != nil {
			continue
		}
		if b, err := agui.Marshal(e); err == nil {
			tail = append(tail, agui.Envelope{ThreadID: d.in.ThreadID, RunID: d.in.RunID, Event: b})
		}
	}
	d.mu.Lock()
	d.to(phaseSuspended)
	d.shutdownTail = tail
	d.mu.Unlock()
}

// finish makes sure the run ended and the thread was released.
func (d *driver) finish() {
	if p := d.phaseNow(); p == phaseRejected || p == phaseSuspended {
		return // released when the failure went back to StartRun, or left to the next process
	}
	if !d.crew.out.Done() {
		d.emit(d.crew.cut(agui.CodeInternal, "the run ended unexpectedly"))
	}
	d.finalize()
}

// finalize records what the run learned and frees the thread, once,
// journaling the run's terminal event in the same write.
func (d *driver) finalize(terminal ...Entry) {
	if !d.moveTo(phaseReleased) {
		return
	}
	d.releaseRun()
	d.stopFinishing()
	d.leasing.Wait() // no renewal races the release
	d.bg.Wait()
	interrupts := d.crew.out.Interrupts()
	for _, p := range interrupts {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(d.svc.ctx), 10*time.Second)
		if err := d.svc.store.IndexInterrupt(ctx, p.Interrupt.ID, d.thread.Key); err != nil {
			d.log.Error("index interrupt", "interrupt_id", p.Interrupt.ID, "err", err)
		}
		cancel()
	}
	var journalBytes int64
	update := func(th *Thread) {
		d.crew.record(th, interrupts)
		th.JournalBytes += d.journaled
		journalBytes = th.JournalBytes
	}
	released, storeErr := d.svc.releaseErr(d.thread, update, terminal...)
	// Reported before readers get the terminal event: a client that scrapes
	// /metrics once its stream ended sees the run.
	d.observeEnd("", "")
	switch {
	case released:
		d.live.Publish(terminal)
		if limit := d.spec.MaxThreadJournalBytes; limit > 0 && journalBytes > limit {
			d.svc.compactJournal(d.thread.Key, limit)
		}
	case len(terminal) > 0:
		// The store refused the release: readers still need the run's end,
		// from the journal if it takes it, else from here.
		d.journal.Add(terminal)
		journaled := d.journal.Flush() == nil
		if !journaled {
			d.live.Publish(terminal)
		}
		if storeErr != nil {
			if journaled {
				terminal = nil
			}
			d.releaseLater(update, terminal)
		}
	case storeErr != nil:
		d.releaseLater(update, nil)
	}
}

// releaseLater retries the release of a run the store refused to release
// (it is out), until the store takes it, another instance adopted the
// run, or the bridge stops. Meanwhile the thread stays busy, as it is in
// the store; once the store is back the run's end — terminal, if the
// journal did not take it: the RUN_ERROR readers were shown from memory —
// is journaled with the release in one write, so the journal ends as the
// readers' streams did, nothing is half-written, and the thread takes
// its next run without a restart.
//
// It retries every releaseRetryMax at most, a fraction of lapseGrace, so
// after an outage that outlasted the lease this instance releases the run
// before another could adopt it (see takeOver) and continue a run whose
// clients were told it ended.
func (d *driver) releaseLater(update func(*Thread), terminal []Entry) {
	retry := retry.Backoff{Next: journal.RetryFirst, Max: d.svc.releaseRetryMax()}
	for {
		if !retry.Sleep(d.svc.stopScan) {
			// Shutting down: the thread stays active for the next
			// process (exclusive store) or an adopter (shared).
			d.log.Warn("the store never took the end of this run before the shutdown; the thread stays busy until it is taken over")
			return
		}
		released, err := d.svc.releaseErr(d.thread, update, terminal...)
		if released || err == nil {
			d.log.Info("the store is back: the run's end is stored and its thread released", "released", released)
			return
		}
	}
}
