package journal

import (
	"testing"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// TestLiveLogWakesEveryWaitingReader: a reader told to wait is woken by
// the next publish, and by the end, whether or not the publishes before
// had a reader waiting (those make no channel).
func TestLiveLogWakesEveryWaitingReader(t *testing.T) {
	l := NewLive("t", 0)
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	wait := func(after int64) <-chan struct{} {
		t.Helper()
		got, pos, ch := l.Since(after)
		if pos != Wait || len(got) != 0 || ch == nil || closed(ch) {
			t.Fatalf("since(%d): %d events, position %d, channel closed %v; want an open channel to wait on", after, len(got), pos, ch != nil && closed(ch))
		}
		return ch
	}
	first := wait(0)
	l.Publish([]store.Entry{entry(1)})
	if !closed(first) {
		t.Fatal("the reader waiting before the first publish was not woken")
	}
	// Nobody waits for the second publish; the third has a reader again.
	l.Publish([]store.Entry{entry(2)})
	if got, pos, _ := l.Since(0); pos != More || len(got) != 2 {
		t.Fatalf("since(0) after two publishes: %d events, position %d", len(got), pos)
	}
	third := wait(2)
	l.Publish([]store.Entry{entry(3)})
	if !closed(third) {
		t.Fatal("the reader waiting after a publish nobody watched was not woken")
	}
	last := wait(3)
	l.End(nil)
	if !closed(last) {
		t.Fatal("the reader waiting at the end was not woken")
	}
	if _, pos, _ := l.Since(3); pos != Ended {
		t.Fatalf("since(3) after the end: position %d, want Ended", pos)
	}
}
