package tasks

import (
	"context"
	"sync"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
)

// maxBacklog bounds the events a signInWatch keeps for the resume run.
const maxBacklog = 1024

// signInWatch keeps reading an agent's stream after a run ended in an
// AUTH_REQUIRED interrupt: the A2A task may go on by itself once the
// credential arrives out of band (A2A-PROTOCOL.md §9 fact 5). Its events
// wait in a backlog until the resume run takes the signInWatch over; from then
// on they flow to that run as they come.
type signInWatch struct {
	taskID a2a.TaskID
	stop   context.CancelFunc // ends the upstream read

	mu      sync.Mutex
	backlog []a2a.Event
	live    chan a2a.Event // set by handoff; closed when the upstream ends
	ended   bool
	gone    chan struct{} // closed when the taker stops reading
}

// push hands one upstream event on; it reports whether to keep reading.
func (f *signInWatch) push(ctx context.Context, ev a2a.Event) bool {
	f.mu.Lock()
	live := f.live
	if live == nil {
		if len(f.backlog) < maxBacklog {
			f.backlog = append(f.backlog, ev)
		}
		f.mu.Unlock()
		return !settles(ev)
	}
	f.mu.Unlock()
	select {
	case live <- ev:
		return !settles(ev)
	case <-f.gone:
		return false
	case <-ctx.Done():
		return false
	}
}

// end marks the upstream finished.
func (f *signInWatch) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = true
	if f.live != nil {
		close(f.live)
	}
}

// handoff gives the taker what the signInWatch collected and, while the
// upstream is still open, a channel of what comes next (nil once it ended).
// The taker must call release when it stops reading.
func (f *signInWatch) handoff() ([]a2a.Event, <-chan a2a.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	backlog := f.backlog
	f.backlog = nil
	if f.ended {
		return backlog, nil
	}
	f.live = make(chan a2a.Event)
	return backlog, f.live
}

// release tells the signInWatch nobody reads any more, and stops it.
func (f *signInWatch) release() {
	f.mu.Lock()
	select {
	case <-f.gone:
	default:
		close(f.gone)
	}
	f.mu.Unlock()
	f.stop()
}

// settles reports whether ev ends the wait for the credential: a final
// state, a new question, or a Message reply.
func settles(ev a2a.Event) bool {
	var st a2a.TaskState
	switch e := ev.(type) {
	case *a2a.Message:
		return true
	case *a2a.Task:
		st = e.Status.State
	case *a2a.StatusUpdate:
		st = e.Status.State
	default:
		return false
	}
	return a2a.IsTerminal(st) || st == a2a.TaskStateInputRequired
}

// watchSignIn registers a signInWatch for key's task, replacing (and
// stopping) any earlier one.
func (s *Service) watchSignIn(key ThreadKey, taskID a2a.TaskID, stop context.CancelFunc) *signInWatch {
	f := &signInWatch{taskID: taskID, stop: stop, gone: make(chan struct{})}
	s.mu.Lock()
	old := s.signIns[key]
	s.signIns[key] = f
	s.mu.Unlock()
	if old != nil {
		old.release()
	}
	return f
}

// signInWatchTTL is how long an ended signInWatch's backlog waits for a resume.
const signInWatchTTL = 30 * time.Minute

// endSignInWatch marks f's upstream ended. f stays registered so the resume
// run still gets its backlog; it is dropped when taken, replaced, or after
// signInWatchTTL.
func (s *Service) endSignInWatch(key ThreadKey, f *signInWatch) {
	f.end()
	time.AfterFunc(signInWatchTTL, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.signIns[key] == f {
			delete(s.signIns, key)
		}
	})
}

// takeSignInWatch removes and returns the signInWatch of key's task, if any.
func (s *Service) takeSignInWatch(key ThreadKey, taskID a2a.TaskID) *signInWatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.signIns[key]
	if f == nil || f.taskID != taskID {
		return nil
	}
	delete(s.signIns, key)
	return f
}
