package agui

import (
	"errors"
	"fmt"
)

// ErrAfterTerminal is returned by Guard.Check for any event after the run's
// RUN_FINISHED or RUN_ERROR. Some generations would accept a RUN_ERROR or
// a second run there (§6.5 rule 3), but the bridge answers each request
// with exactly one run and nothing after its terminal event (§10.1 rule 1,
// §11 fact 1).
var ErrAfterTerminal = errors.New("agui: event after the run's terminal event")

// Guard checks every event the bridge is about to write against every
// client generation that might be reading: for a 1.0 client
// (RunAgentInput.IsV1) just Gen1_0; otherwise both Gen0_0_59 and Gen0_0_36,
// because a request without protocolVersion may come from either and they
// cannot be told apart (§0, §10.1 rule 7).
//
// An event is accepted by all of them or by none: on error no verifier has
// changed, so the caller can write something else (typically closing what
// is open and a RUN_ERROR) and keep checking. A Guard is not safe for
// concurrent use; it belongs to the one writer of a stream.
type Guard struct {
	verifiers  [2]*Verifier
	n          int
	terminated bool
}

// NewGuard returns the guard for one response stream; v1 is
// RunAgentInput.IsV1() of the request.
func NewGuard(v1 bool) *Guard {
	if v1 {
		return &Guard{verifiers: [2]*Verifier{NewVerifier(Gen1_0)}, n: 1}
	}
	return &Guard{verifiers: [2]*Verifier{NewVerifier(Gen0_0_59), NewVerifier(Gen0_0_36)}, n: 2}
}

// NewGuardFor returns a guard checking the given generations only (one or
// two), for a stream whose reader is known to be at least as new as the
// oldest of them.
func NewGuardFor(gens ...Generation) *Guard {
	g := &Guard{}
	for _, gen := range gens[:min(len(gens), len(g.verifiers))] {
		g.verifiers[g.n] = NewVerifier(gen)
		g.n++
	}
	return g
}

// Check returns nil if e may be written next, else the first failing
// generation's *VerifyError (or ErrAfterTerminal). On error the event must
// not be written; the guard's state is unchanged.
func (g *Guard) Check(e Event) error {
	if g.terminated {
		if isNilEvent(e) {
			return ErrAfterTerminal
		}
		return fmt.Errorf("%w: %s", ErrAfterTerminal, e.Type())
	}
	var next [2]*Verifier
	for i, v := range g.verifiers[:g.n] {
		n, err := v.prepare(e)
		if err != nil {
			return err
		}
		next[i] = n
	}
	for i, v := range g.verifiers[:g.n] {
		v.commit(e, next[i])
	}
	if t := e.Type(); t == EventRunFinished || t == EventRunError {
		g.terminated = true
	}
	return nil
}

// Terminated reports whether RUN_FINISHED or RUN_ERROR has been accepted:
// the run is over and the response can end.
func (g *Guard) Terminated() bool { return g.terminated }

// CheckStream checks a whole stream as a Guard would while writing it,
// and reports the first event it would refuse (nil for a valid stream).
func CheckStream(v1 bool, events []Event) error {
	g := NewGuard(v1)
	for i, e := range events {
		if err := g.Check(e); err != nil {
			return fmt.Errorf("event %d (%s): %w", i, e.Type(), err)
		}
	}
	return nil
}
