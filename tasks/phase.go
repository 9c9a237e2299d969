package tasks

import "slices"

// phase is where a run is in its life, as the driver, StartRun (waiting
// for the agent's first answer) and the lease keeper see it. It only moves
// along these arrows (to):
//
//	starting ─accept, awaitAnswer─▶ running ─finalize─▶ released
//	starting ─finalize─▶ released     (the run ended before StartRun stopped waiting)
//	starting ─reject─▶ rejected       (the failure went back to StartRun as an HTTP error)
//	starting, running ─suspend─▶ suspended
//
// released, rejected and suspended are final. The thread is released in
// released and rejected; in suspended it is left as it is, to the next
// process (a shutdown) or to the instance that adopted the run.
type phase uint8

const (
	// phaseStarting: StartRun waits for the agent's first answer; a
	// failure now goes back to it (reject).
	phaseStarting phase = iota
	// phaseRunning: StartRun returned the stream; failures go into it.
	phaseRunning
	// phaseReleased: the run ended and released its thread (finalize).
	phaseReleased
	// phaseRejected: the failure went back to StartRun; the thread was
	// released and nothing was journaled.
	phaseRejected
	// phaseSuspended: the bridge shut down under the run, or another
	// instance adopted it; readers get the notice in shutdownTail.
	phaseSuspended
)

// next lists the phases each phase may move to.
var next = [...][]phase{
	phaseStarting: {phaseRunning, phaseReleased, phaseRejected, phaseSuspended},
	phaseRunning:  {phaseReleased, phaseSuspended},
}

// to moves the run to p if the arrows allow it from where it is, and
// reports whether it moved. d.mu is held.
func (d *driver) to(p phase) bool {
	if int(d.phase) >= len(next) || !slices.Contains(next[d.phase], p) {
		return false
	}
	d.phase = p
	return true
}

// moveTo is to with d.mu taken.
func (d *driver) moveTo(p phase) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.to(p)
}

// phaseNow is the run's phase.
func (d *driver) phaseNow() phase {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.phase
}

// threadReleased reports whether the run gave its thread back.
func (p phase) threadReleased() bool { return p == phaseReleased || p == phaseRejected }
