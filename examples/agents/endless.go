package agents

import (
	"context"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Endless is a hostile agent: it answers in one text artifact appended
// chunk by chunk and never finishes, the agent of issue 20 that grew a
// bridge to gigabytes. Only the bridge's bounds (limits.maxRunBytes, the
// run timeout) or a cancel end its task. It is not in the demo catalog;
// cmd/bridge-soak runs it under abuse.
//
//	Task{SUBMITTED} → Status{WORKING} → Artifact{append=false} → Artifact{append=true} … (until cancelled)
//
// Chunk i (from 0) is [EndlessChunk](i, ChunkBytes). Behind a2asrv's default
// handler every appended chunk costs the agent a copy of the whole task
// (a2a-go v2.3.1 copies it per artifact update), so a long run is quadratic
// in the agent; a harness that runs it for minutes streams it straight from
// Execute instead.
type Endless struct {
	cancelOnly
	ChunkBytes int           // bytes of text per chunk; below 1 means 1024
	Interval   time.Duration // pause before each chunk after the first; 0 means none
}

// EndlessChunk is the text of the [Endless] agent's chunk i: size bytes
// (at least its number), starting with the number so that no two
// neighbours are the same, padded with dots, ending with a space.
func EndlessChunk(i, size int) string {
	head := "e" + strconv.Itoa(i) + " "
	if pad := size - len(head); pad > 0 {
		return head[:len(head)-1] + strings.Repeat(".", pad) + " "
	}
	return head
}

// Execute implements [a2asrv.AgentExecutor].
func (a Endless) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	size := a.ChunkBytes
	if size < 1 {
		size = 1024
	}
	return execute(ctx, ec, a.Interval, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		first := a2a.NewArtifactEvent(ec, a2a.NewTextPart(EndlessChunk(0, size)))
		first.Artifact.Name = "answer"
		if !r.emit(first) {
			return
		}
		for i := 1; r.pause(); i++ {
			ev := a2a.NewArtifactUpdateEvent(ec, first.Artifact.ID, a2a.NewTextPart(EndlessChunk(i, size)))
			ev.Artifact.Name = "answer"
			if !r.emit(ev) {
				return
			}
		}
	})
}

var _ a2asrv.AgentExecutor = Endless{}
