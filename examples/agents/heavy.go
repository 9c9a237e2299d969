package agents

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Heavy is a hostile agent whose events stay within every per-event limit
// but cost a translator that works in proportion to the whole state
// (issue 33, items 1 and 2). The user's text picks the shape:
//
//   - "parts": one WORKING status update carrying Parts small data parts
//     (each {"kNNNNNN": "0123456789"}, ~24 bytes), then COMPLETED. Merged
//     by copying the state per part it cost ~165 s of CPU for 100,000.
//   - anything else ("deltas"): a data artifact of about ArtifactBytes,
//     then Updates status updates each carrying {"n": i}, then COMPLETED.
//     Diffed whole per event it cost ~220 s for 20,000 beside 190 KB.
//
// It is not in the demo catalog; cmd/bridge-soak runs it under abuse.
type Heavy struct {
	cancelOnly
	Parts         int // data parts of the one event of "parts"; below 1 means 100,000
	Updates       int // status updates of "deltas"; below 1 means 20,000
	ArtifactBytes int // the data artifact of "deltas"; below 1 means 190 KB
}

// HeavyArtifact is the data of Heavy's "deltas" artifact: about size
// bytes of JSON in keys of 40-odd bytes each.
func HeavyArtifact(size int) map[string]any {
	m := map[string]any{}
	for i := 0; i*44 < size; i++ {
		m[fmt.Sprintf("key%06d", i)] = fmt.Sprintf("value of key %06d ......", i)
	}
	return m
}

// Execute implements [a2asrv.AgentExecutor].
func (a Heavy) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	parts, updates, size := a.Parts, a.Updates, a.ArtifactBytes
	if parts < 1 {
		parts = 100_000
	}
	if updates < 1 {
		updates = 20_000
	}
	if size < 1 {
		size = 190_000
	}
	shape := ""
	if ec.Message != nil {
		for _, p := range ec.Message.Parts {
			shape += p.Text()
		}
	}
	return execute(ctx, ec, 0, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		if strings.Contains(shape, "parts") {
			ps := make([]*a2a.Part, parts)
			for i := range ps {
				ps[i] = a2a.NewDataPart(map[string]any{fmt.Sprintf("k%06d", i): "0123456789"})
			}
			if !r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, r.agentMessage(ps...))) {
				return
			}
		} else {
			if !r.artifact("big", a2a.NewDataPart(HeavyArtifact(size))) {
				return
			}
			for i := range updates {
				ev := a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking,
					r.agentMessage(a2a.NewDataPart(map[string]any{"data": map[string]any{"n": i}})))
				if !r.emit(ev) {
					return
				}
			}
		}
		r.status(a2a.TaskStateCompleted, "done")
	})
}

var _ a2asrv.AgentExecutor = Heavy{}
