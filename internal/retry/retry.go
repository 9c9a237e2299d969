// Package retry paces the bridge's retry and wait loops: the journal's
// appends to a failing store, the release of a run the store refused,
// GetTask polling, the lease keeper and scanner.
package retry

import "time"

// Backoff paces a retry loop: each wait (Step) doubles the one before,
// from Next up to Max.
type Backoff struct {
	Next, Max time.Duration
}

// Step returns the wait before the next attempt, and doubles the one after.
func (b *Backoff) Step() time.Duration {
	w := b.Next
	b.Next = min(2*b.Next, b.Max)
	return w
}

// Sleep waits the next step (see Sleep), and reports whether it all passed.
func (b *Backoff) Sleep(stop <-chan struct{}) bool { return Sleep(b.Step(), stop, nil) }

// Sleep waits d, or less when a or b closes first (a nil channel never
// does), and reports whether the whole wait passed. Every timed wait of
// the engine's loops goes through it, so each can be cut short by what
// ends it and leaves no timer behind.
func Sleep(d time.Duration, a, b <-chan struct{}) bool {
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
