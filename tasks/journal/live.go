package journal

import (
	"sync"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// MaxPending bounds how many of a run's events may wait for the store: a
// driver that gets that far ahead of its journal waits for it.
const MaxPending = 1024

// liveKeep is how many stored events a live log keeps after they reached
// the store, so that a reader a little behind does not go to the store.
const liveKeep = 256

// Live is a run's stored events in memory, for the readers in this
// process: a reader follows the run from here instead of polling the
// store, and sees each batch as soon as its commit returns.
//
// Batches are published in sequence order by the run's journal writer.
// Every event below the first one held is in the store (the log keeps the
// last liveKeep events), so a reader that finds itself behind reads the
// store up to there and comes back.
type Live struct {
	threadID string

	mu sync.Mutex
	// events hold seqs first .. first+len(events)-1; elements are never
	// modified once published, so readers may keep slices of them.
	events []agui.Envelope
	first  int64
	// origin is the seq of the run's first event: first until events are
	// dropped.
	origin int64
	// changed is closed (and replaced) by the first publish after a
	// reader was given it (watched), and at the end: a publish that no
	// reader waits for makes no channel. firstBatch is closed by the first
	// publish.
	changed    chan struct{}
	watched    bool
	firstBatch chan struct{}
	ended      bool
	// terminal says the run's last event was RUN_FINISHED or RUN_ERROR;
	// otherwise an ended log stopped short (shutdown) and tail holds the
	// notice readers get instead, unnumbered.
	terminal bool
	tail     []agui.Envelope
}

func NewLive(threadID string, after int64) *Live {
	return &Live{threadID: threadID, first: after + 1, origin: after + 1, changed: make(chan struct{}), firstBatch: make(chan struct{})}
}

// End marks the run over; tail is what readers get after the events when
// the run stopped without a terminal event.
func (l *Live) End(tail []agui.Envelope) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.ended, l.tail = true, tail
	l.wake()
}

// wake closes changed for the readers holding it and makes the next one.
func (l *Live) wake() {
	close(l.changed)
	l.changed, l.watched = make(chan struct{}), false
}

// Publish adds the next stored events (their Seq follows the last one's)
// and drops all but the last liveKeep. Dropping copies what stays into a
// new array, so it waits until liveKeep events can go: a long run's memory
// stays bounded and the copying is amortized.
func (l *Live) Publish(entries []store.Entry) {
	if len(entries) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range entries {
		l.events = append(l.events, agui.Envelope{ThreadID: l.threadID, RunID: e.RunID, Seq: e.Seq, Event: e.Event})
	}
	select {
	case <-l.firstBatch:
	default:
		close(l.firstBatch)
	}
	l.terminal = entries[len(entries)-1].Terminal
	if drop := len(l.events) - 2*liveKeep; drop >= 0 {
		l.events = append([]agui.Envelope(nil), l.events[drop+liveKeep:]...)
		l.first += int64(drop + liveKeep)
	}
	if l.watched {
		l.wake()
	}
}

// Position says where a reader stands against the log.
type Position int

const (
	More   Position = iota // events returned; ask again
	Wait                   // nothing new yet: wait on the channel
	Behind                 // the reader is before the log: read the store
	Ended                  // the run is over and the reader has all of it
)

// Since returns the events after seq after, or says why there are none.
func (l *Live) Since(after int64) ([]agui.Envelope, Position, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after+1 < l.first {
		return nil, Behind, nil
	}
	i := after + 1 - l.first
	if i < int64(len(l.events)) {
		return l.events[i:len(l.events):len(l.events)], More, nil
	}
	if l.ended || l.terminal {
		return nil, Ended, nil
	}
	l.watched = true
	return nil, Wait, l.changed
}

// Published is closed once the run's first events are in the log.
func (l *Live) Published() <-chan struct{} { return l.firstBatch }

// Start is the seq of the run's first event, and whether the log dropped
// events since (they are in the store).
func (l *Live) Start() (seq int64, dropped bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.origin, l.first > l.origin
}

// ShortTail is the notice for readers of a run that stopped without a
// terminal event (nil when it ended normally or is still going).
func (l *Live) ShortTail() []agui.Envelope {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.terminal {
		return nil
	}
	return l.tail
}
