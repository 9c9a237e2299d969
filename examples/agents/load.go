package agents

import (
	"context"
	"iter"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Loader answers in one text artifact streamed in many chunks, for load
// tests (cmd/bridge-bench). It is not in the demo catalog.
//
//	Task{SUBMITTED} → Status{WORKING} → Artifact{append=false} → Artifact{append=true} …
//	→ Artifact{append=true, lastChunk=true} → Status{COMPLETED}
//
// Chunk i (from 0) is the text [LoaderChunk](i). With Interval, Hold and
// Release all zero it sends exactly Chunks chunks back to back, so that the
// agent costs as little as possible per chunk and the client's side of the
// stream is what a benchmark measures.
//
// The other fields make a slow agent that keeps many tasks open at once: a
// chunk every Interval, and the task is finished (one more chunk with
// lastChunk, then COMPLETED) only once at least Chunks chunks were sent, Hold
// has passed since the execution started, and Release is closed. A harness
// that closes Release when it has seen every stream open gets a plateau that
// does not depend on how long the streams took to open.
type Loader struct {
	cancelOnly
	Chunks   int             // chunks before the task may finish; below 1 means 1
	Interval time.Duration   // pause before each chunk after the first; 0 means none
	Hold     time.Duration   // the task stays open at least this long; 0 means no minimum
	Release  <-chan struct{} // when not nil, the task stays open until it is closed
}

// LoaderChunk is the text of the [Loader]'s chunk i: short, like an LLM
// token, never empty, and different from its neighbours so that no client can
// mistake one chunk for a repeat of the previous one.
func LoaderChunk(i int) string {
	return "w" + strconv.Itoa(i) + " "
}

// Execute implements [a2asrv.AgentExecutor].
func (a Loader) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	chunks := max(a.Chunks, 1)
	return execute(ctx, ec, 0, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		var holdC <-chan time.Time
		if a.Hold > 0 {
			hold := time.NewTimer(a.Hold)
			defer hold.Stop()
			holdC = hold.C
		}
		releaseC := a.Release
		// A nil holdC or releaseC means that condition has been met.
		mayFinish := func(sent int) bool { return sent >= chunks && holdC == nil && releaseC == nil }
		var id a2a.ArtifactID
		for sent := 0; ; {
			var ev *a2a.TaskArtifactUpdateEvent
			if sent == 0 {
				ev = a2a.NewArtifactEvent(ec, a2a.NewTextPart(LoaderChunk(sent)))
				id = ev.Artifact.ID
			} else {
				ev = a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart(LoaderChunk(sent)))
			}
			ev.Artifact.Name = "answer"
			ev.LastChunk = mayFinish(sent + 1)
			if !r.emit(ev) {
				return
			}
			sent++
			if ev.LastChunk {
				break
			}
			if a.Interval <= 0 && sent < chunks {
				continue // back to back: the benchmark's fast agent
			}
			if !a.wait(ctx, &holdC, &releaseC, func() bool { return mayFinish(sent) }) {
				return
			}
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// wait blocks until the next chunk is due: Interval has passed, or the task
// may finish now (then the closing chunk goes at once). It clears *holdC and
// *releaseC as their conditions are met, and reports false when ctx is done.
func (a Loader) wait(ctx context.Context, holdC *<-chan time.Time, releaseC *<-chan struct{}, mayFinish func() bool) bool {
	var tickC <-chan time.Time
	if a.Interval > 0 {
		tick := time.NewTimer(a.Interval)
		defer tick.Stop()
		tickC = tick.C
	}
	for !mayFinish() {
		select {
		case <-ctx.Done():
			return false
		case <-*holdC:
			*holdC = nil
		case <-*releaseC:
			*releaseC = nil
		case <-tickC:
			return true
		}
	}
	return true
}

var _ a2asrv.AgentExecutor = Loader{}
