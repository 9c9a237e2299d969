package tasks

import "time"

// backoff paces a retry loop — the journal's appends to a failing store,
// the release of a run the store refused, GetTask polling: each wait
// (step) doubles the one before, from the first up to max.
type backoff struct {
	next, max time.Duration
}

// step returns the wait before the next attempt, and doubles the one after.
func (b *backoff) step() time.Duration {
	w := b.next
	b.next = min(2*b.next, b.max)
	return w
}

// sleep waits the next step (see sleep), and reports whether it all passed.
func (b *backoff) sleep(stop <-chan struct{}) bool { return sleep(b.step(), stop, nil) }

// sleep waits d, or less when a or b closes first (a nil channel never
// does), and reports whether the whole wait passed. It is every timed wait
// of the engine's loops (backoff, the lease keeper and scanner), so each
// can be cut short by what ends it and leaves no timer behind.
func sleep(d time.Duration, a, b <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a:
		return false
	case <-b:
		return false
	}
}
