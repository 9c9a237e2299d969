package mapping

import (
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// scriptFromBytes builds an arbitrary A2A event sequence from fuzz input:
// every byte pair picks an event kind and its details, so the fuzzer can
// reach interleavings no agent was written to produce.
func scriptFromBytes(data []byte) []a2a.Event {
	states := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateWorking,
		a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected,
		a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired, a2a.TaskStateUnspecified}
	texts := []string{"", " ", "Hel", "lo", "Hello", "Hello world.", "The answer is 42.", "x\ny", "é☃"}
	info := a2a.TaskInfo{TaskID: "task-1", ContextID: "ctx-1"}
	var out []a2a.Event
	for i := 0; i+1 < len(data); i += 2 {
		op, arg := data[i], data[i+1]
		text := texts[int(arg)%len(texts)]
		var msg *a2a.Message
		if arg&0x10 != 0 {
			msg = &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart(text)}}
			if arg&0x20 != 0 {
				msg.Parts = append(msg.Parts, a2a.NewDataPart(map[string]any{"k": int(arg)}))
			}
			if arg&0x40 != 0 {
				msg.Parts = append(msg.Parts, fuzzA2UIPart(op, arg))
			}
		}
		switch op % 5 {
		case 0:
			out = append(out, &a2a.StatusUpdate{TaskID: info.TaskID, ContextID: info.ContextID,
				Status: a2a.TaskStatus{State: states[int(op/5)%len(states)], Message: msg}})
		case 1, 2:
			id := a2a.ArtifactID([]string{"a", "b", "c"}[int(op/5)%3])
			parts := []*a2a.Part{a2a.NewTextPart(text)}
			if arg&0x40 != 0 {
				parts = append(parts, a2a.NewURLPart("https://example.com/f", "text/plain", "f.txt"))
			}
			if arg&0x80 != 0 {
				parts = append(parts, fuzzA2UIPart(op, arg))
			}
			out = append(out, &a2a.ArtifactUpdate{TaskID: info.TaskID, ContextID: info.ContextID,
				Artifact: &a2a.Artifact{ID: id, Parts: parts}, Append: arg&0x01 != 0, LastChunk: arg&0x02 != 0})
		case 3:
			task := &a2a.Task{ID: info.TaskID, ContextID: info.ContextID,
				Status: a2a.TaskStatus{State: states[int(op/5)%len(states)], Message: msg}}
			if arg&0x01 != 0 {
				task.Artifacts = []*a2a.Artifact{{ID: "a", Parts: []*a2a.Part{a2a.NewTextPart(text + text)}}}
			}
			out = append(out, task)
		case 4:
			if msg == nil {
				msg = &a2a.Message{ID: "r", Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart(text)}}
			}
			out = append(out, msg)
		}
	}
	return out
}

// FuzzTranslator: any A2A event sequence gives a stream every client
// generation accepts, ending exactly once.
func FuzzTranslator(f *testing.F) {
	f.Add([]byte{0, 0x12, 1, 0x13, 2, 0x01, 15, 0x10})
	f.Add([]byte{5, 0x14, 5, 0x15, 10, 0x02, 20, 0x16})
	f.Add([]byte{3, 0x01, 8, 0x11, 4, 0x30})
	f.Add([]byte{35, 0x15, 0, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v1 := range []bool{false, true} {
			for _, policy := range []StatusTextPolicy{StatusAsMessage, StatusAsActivity, StatusAsReasoning, StatusHidden} {
				tr := New(Options{ThreadID: "t", RunID: "r", V1: v1, StatusText: policy})
				out := tr.Start()
				for _, ev := range scriptFromBytes(data) {
					out = append(out, tr.Translate(ev)...)
				}
				out = append(out, tr.Fail("a2a_incomplete", "ended")...)
				if err := agui.CheckStream(v1, out); err != nil {
					t.Fatalf("v1=%v policy=%s: %v", v1, policy, err)
				}
				last := out[len(out)-1].Type()
				if last != agui.EventRunFinished && last != agui.EventRunError {
					t.Fatalf("stream does not end with a terminal event: %s", last)
				}
			}
		}
	})
}

func BenchmarkTranslateArtifactChunk(b *testing.B) {
	tr := New(Options{ThreadID: "t", RunID: "r"})
	tr.Start()
	tr.Translate(&a2a.Task{ID: "task", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	tr.Translate(&a2a.ArtifactUpdate{TaskID: "task", Artifact: &a2a.Artifact{ID: "a", Parts: []*a2a.Part{a2a.NewTextPart("start ")}}})
	ev := &a2a.ArtifactUpdate{TaskID: "task", Append: true,
		Artifact: &a2a.Artifact{ID: "a", Parts: []*a2a.Part{a2a.NewTextPart("a streamed token ")}}}
	b.ReportAllocs()
	for b.Loop() {
		tr.Translate(ev)
	}
}

func BenchmarkTranslateStatusText(b *testing.B) {
	tr := New(Options{ThreadID: "t", RunID: "r"})
	tr.Start()
	tr.Translate(&a2a.Task{ID: "task", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	ev := &a2a.StatusUpdate{TaskID: "task", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
		Message: &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart("token ")}}}}
	b.ReportAllocs()
	for b.Loop() {
		tr.Translate(ev)
	}
}

// BenchmarkTranslateDataArtifact measures the shared-state path: an
// appended data artifact merged into the view and sent as a JSON-Patch
// delta.
func BenchmarkTranslateDataArtifact(b *testing.B) {
	tr := New(Options{ThreadID: "t", RunID: "r", V1: true})
	tr.Start()
	tr.Translate(&a2a.Task{ID: "task", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	tr.Translate(&a2a.ArtifactUpdate{TaskID: "task", Artifact: &a2a.Artifact{ID: "progress",
		Parts: []*a2a.Part{a2a.NewDataPart(map[string]any{"step": 0, "of": 100, "label": "starting"})}}})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		tr.Translate(&a2a.ArtifactUpdate{TaskID: "task", Append: true, Artifact: &a2a.Artifact{ID: "progress",
			Parts: []*a2a.Part{a2a.NewDataPart(map[string]any{"step": i})}}})
	}
}
