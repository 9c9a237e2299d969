package mapping

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// allocated is the bytes the process allocated while f ran. The tests
// using it are not parallel: Go runs them while no parallel test does.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func working(parts ...*a2a.Part) *a2a.StatusUpdate {
	return &a2a.StatusUpdate{TaskID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
		Message: &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: parts}}}
}

// One event within the event limit made of many small data parts: each
// part merged by copying the whole status data made it quadratic (issue
// 33 item 1: 100,000 parts, ~165 s of CPU), and the state limit was
// checked only once every part was in. Now each part costs its own size
// and merging stops at the limit.
func TestManyDataPartsCostTheirSize(t *testing.T) {
	const limit = 64 << 10
	parts := make([]*a2a.Part, 10_000)
	for i := range parts {
		parts[i] = a2a.NewDataPart(map[string]any{fmt.Sprintf("k%05d", i): "0123456789"})
	}
	tr := New(Options{ThreadID: "t", RunID: "r", V1: true, MaxStateBytes: limit,
		Input: &agui.RunAgentInput{ThreadID: "t", RunID: "r"}})
	tr.Start()
	var out []agui.Event
	n := allocated(func() { out = tr.Translate(working(parts...)) })
	if n > 32<<20 {
		t.Errorf("one event of %d small data parts allocated %d MB; want it in proportion to the event (< 32 MB)", len(parts), n>>20)
	}
	size := len(tr.State())
	if size <= limit || size > limit+64 {
		t.Errorf("the state is %d bytes after the event; want merging stopped just past the %d-byte limit", size, limit)
	}
	if got := tr.StateSize(); got != size {
		t.Errorf("StateSize is %d; the state's encoding takes %d bytes", got, size)
	}
	if len(out) == 0 {
		t.Error("no events")
	}
}

// Small state changes beside a large state: marshalling and diffing the
// whole state on every event made each one cost the state's size (issue
// 33 item 2: a 190 KB artifact then 20,000 one-key updates, ~220 s of
// CPU). The delta is built from the paths that changed.
func TestSmallChangesBesideALargeStateCostTheirSize(t *testing.T) {
	big := map[string]any{}
	for i := range 4000 {
		big[fmt.Sprintf("key%05d", i)] = fmt.Sprintf("value of key %05d", i)
	}
	tr := New(Options{ThreadID: "t", RunID: "r", V1: true, Input: &agui.RunAgentInput{ThreadID: "t", RunID: "r"}})
	tr.Start()
	tr.Translate(working())
	tr.Translate(&a2a.ArtifactUpdate{TaskID: "task-1", ContextID: "ctx-1",
		Artifact: &a2a.Artifact{ID: "big", Parts: []*a2a.Part{a2a.NewDataPart(big)}}})
	if len(tr.State()) < 100<<10 {
		t.Fatalf("the state is only %d bytes", len(tr.State()))
	}
	const updates = 200
	var deltas int
	n := allocated(func() {
		for i := range updates {
			for _, e := range tr.Translate(working(a2a.NewDataPart(map[string]any{"n": i}))) {
				if d, ok := e.(*agui.StateDelta); ok {
					deltas++
					if len(d.Delta) != 1 || d.Delta[0].Path != "/a2a/statusData/n" && d.Delta[0].Path != "/a2a/statusData" {
						t.Fatalf("update %d: delta %+v; want one operation on statusData", i, d.Delta)
					}
				}
			}
		}
	})
	if deltas != updates {
		t.Errorf("%d deltas for %d updates", deltas, updates)
	}
	// The old way allocated more than the state's size per update.
	if per := n / updates; per > 16<<10 {
		t.Errorf("each one-key update allocated %d bytes beside a %d-byte state; want it in proportion to the update (< 16 KB)", per, len(tr.State()))
	}
}
