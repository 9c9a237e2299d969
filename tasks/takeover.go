package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/tasks/journal"
)

// Recover takes over every run the store shows in progress whose driver is
// gone — with an exclusive store, every run a previous process of this
// bridge left behind (it was shut down or killed mid-run). Each run is
// continued where its journal ends: the bridge reattaches to the run's A2A
// task and finishes the run into the journal, so a client that comes back
// (GET /agents/{name}/threads/{id}/events after its last id) reads one
// whole run. It returns how many runs it took over.
func (s *Service) Recover(ctx context.Context) (int, error) {
	keys, err := s.store.ActiveThreads(ctx)
	if err != nil {
		return 0, fmt.Errorf("tasks: recover: %w", err)
	}
	n := 0
	for _, key := range keys {
		took, err := s.takeOver(ctx, key)
		if err != nil {
			s.log.Error("take over run", "agent", key.Agent, "thread_id", key.ThreadID, "err", err)
			continue
		}
		if took {
			n++
		}
	}
	return n, nil
}

// takeOver continues key's active run when its driver is gone. It reports
// whether this process took the run (another may have, first).
func (s *Service) takeOver(ctx context.Context, key ThreadKey) (bool, error) {
	if !s.enter() {
		return false, ErrShuttingDown
	}
	started := false
	defer func() {
		if !started {
			s.wg.Done()
		}
	}()
	th, err := s.adoptable(ctx, key)
	if th == nil || err != nil {
		return false, err
	}
	// An agent or team this config does not have (a reload removed it)
	// is left alone, as adoptable leaves one of another instance.
	st := &start{s: s, name: key.Agent, cat: s.catalog.Load()}
	if !st.cast() {
		return false, nil
	}
	in := recordedInput(s.log, key, th.Active)
	next, prior, last, err := s.reclaim(ctx, th)
	if next == nil || err != nil {
		return false, err
	}
	d := newDriver(s, st.spec, next, in, last, runPlan{takeover: true, prior: prior})
	d.crew = newCrew(d, st.crew, st.cat, st.alone)
	d.begin(ctx, trace.SpanKindInternal)
	started = true
	s.register(d)
	go d.lifecycle()
	return true, nil
}

// adoptable reads key's thread and returns it when its active run is this
// process's to take over now: its owner is gone (an earlier process of an
// exclusive store, or an instance whose lease lapsed long enough ago) and
// its agent is configured here. Otherwise it returns nil.
func (s *Service) adoptable(ctx context.Context, key ThreadKey) (*Thread, error) {
	th, err := s.store.GetThread(ctx, key)
	if err != nil {
		return nil, err
	}
	if th.Active == nil || (!s.stale(th) && !s.leaseLapsed(th)) {
		return nil, nil
	}
	if !s.stale(th) {
		// Not before its owner had lapseGrace to write: it may be alive
		// and only cut off from the store for longer than the lease.
		if ok, wait := s.lapsedLongEnough(key, th.Version); !ok {
			s.adoptAfter(key, wait)
			return nil, nil
		}
	}
	// An agent this process's config does not have (removed by a reload,
	// or only in another instance's config) cannot be driven from here:
	// leave the run to an instance that has it.
	if !s.HasAgent(key.Agent) {
		s.log.Warn("a run to take over is of an agent not configured here; left", "agent", key.Agent, "thread_id", key.ThreadID)
		return nil, nil
	}
	return th, nil
}

// recordedInput is the request of a run taken over, as its thread
// recorded it.
func recordedInput(log *slog.Logger, key ThreadKey, active *ActiveRun) *agui.RunAgentInput {
	in := &agui.RunAgentInput{ThreadID: key.ThreadID, RunID: active.RunID}
	if len(active.Input) > 0 {
		if err := json.Unmarshal(active.Input, in); err != nil {
			log.Warn("the run's recorded request does not decode; continuing without it", "thread_id", key.ThreadID, "err", err)
			in = &agui.RunAgentInput{ThreadID: key.ThreadID, RunID: active.RunID}
		}
	}
	return in
}

// reclaim makes this process th's active run's owner, and reads what the
// run journaled (prior) and where its journal ends (last). It returns a
// nil record when another process claimed the run first.
func (s *Service) reclaim(ctx context.Context, th *Thread) (next *Thread, prior []agui.Event, last int64, err error) {
	next = th.Clone()
	next.Active.Owner = s.opt.Instance
	if s.opt.Lease > 0 {
		next.Active.LeaseExpires = time.Now().Add(s.opt.Lease)
	}
	v, err := s.store.PutThread(ctx, next)
	if errors.Is(err, ErrConflict) {
		return nil, nil, 0, nil
	}
	if err != nil {
		return nil, nil, 0, err
	}
	next.Version = v
	// Read after the claim: an owner that was only slow, not dead, stops
	// appending once it sees the claim, so the journal read now is the one
	// this driver continues. A failure here leaves the claim to lapse and
	// the run to be adopted again.
	if prior, err = s.runEvents(ctx, th.Key, th.Active.RunID, th.Active.After); err != nil {
		return nil, nil, 0, err
	}
	if last, err = s.store.LastSeq(ctx, th.Key); err != nil {
		return nil, nil, 0, err
	}
	return next, prior, last, nil
}

// runEvents decodes the events run runID journaled after seq after.
func (s *Service) runEvents(ctx context.Context, key ThreadKey, runID string, after int64) ([]agui.Event, error) {
	var out []agui.Event
	for {
		entries, err := s.store.Read(ctx, key, after, journal.ReadBatch)
		if err != nil {
			return nil, err
		}
		if len(entries) == 0 {
			return out, nil
		}
		for _, e := range entries {
			after = e.Seq
			if e.RunID != runID {
				continue
			}
			ev, err := agui.Decode(e.Event)
			if err != nil {
				return nil, fmt.Errorf("journal entry %d of run %s: %w", e.Seq, runID, err)
			}
			out = append(out, ev)
		}
	}
}

func isTerminalEvent(e agui.Event) bool {
	t := e.Type()
	return t == agui.EventRunFinished || t == agui.EventRunError
}
