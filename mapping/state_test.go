package mapping

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// dataUpdates builds a sequence of data artifact updates (and status data
// and UI state parts) from fuzz bytes: the shapes an agent might stream.
func dataUpdates(data []byte) []a2a.Event {
	values := func(b byte) any {
		switch b % 7 {
		case 0:
			return map[string]any{"k": int(b), "nested": map[string]any{"x": []any{1, "two"}}}
		case 1:
			return map[string]any{"k" + string(rune('a'+b%5)): b%2 == 0}
		case 2:
			return []any{int(b), "v"}
		case 3:
			return []any{}
		case 4:
			return "a string ~ with / slashes"
		case 5:
			return nil
		default:
			return float64(b) / 3
		}
	}
	var out []a2a.Event
	out = append(out, &a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	for i := 0; i+1 < len(data); i += 2 {
		op, arg := data[i], data[i+1]
		switch op % 4 {
		case 0, 1:
			id := a2a.ArtifactID([]string{"a", "b/c", "d~e"}[int(arg)%3])
			out = append(out, &a2a.ArtifactUpdate{TaskID: "task-1", Append: op&0x10 != 0,
				Artifact: &a2a.Artifact{ID: id, Parts: []*a2a.Part{a2a.NewDataPart(values(arg))}}})
		case 2:
			out = append(out, &a2a.StatusUpdate{TaskID: "task-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
				Message: &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewDataPart(values(arg))}}}})
		case 3:
			p := a2a.NewDataPart(values(arg))
			p.Metadata = map[string]any{ExtensionURI: map[string]any{"kind": "ui-state"}}
			out = append(out, &a2a.StatusUpdate{TaskID: "task-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
				Message: &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: []*a2a.Part{p}}}})
		}
	}
	return out
}

// checkMirror applies every STATE_SNAPSHOT and STATE_DELTA to a client-side
// mirror, as @ag-ui/client does, and requires it to equal the bridge's
// document after every event.
func checkMirror(t *testing.T, v1 bool, events []a2a.Event) {
	t.Helper()
	in := &agui.RunAgentInput{ThreadID: "t", RunID: "r", State: json.RawMessage(`{"client":{"keep":true},"a2a":"stale"}`)}
	tr := New(Options{ThreadID: "t", RunID: "r", V1: v1, Input: in})
	var mirror []byte
	apply := func(out []agui.Event) {
		for _, e := range out {
			switch e := e.(type) {
			case *agui.StateSnapshot:
				mirror = append([]byte(nil), e.Snapshot...)
			case *agui.StateDelta:
				raw, err := json.Marshal(e.Delta)
				if err != nil {
					t.Fatal(err)
				}
				patch, err := jsonpatch.DecodePatch(raw)
				if err != nil {
					t.Fatalf("delta %s: %v", raw, err)
				}
				if mirror, err = patch.Apply(mirror); err != nil {
					t.Fatalf("delta %s does not apply to %s: %v", raw, mirror, err)
				}
			}
		}
	}
	apply(tr.Start())
	for i, ev := range events {
		apply(tr.Translate(ev))
		var got, want any
		if err := json.Unmarshal(mirror, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(tr.State(), &want); err != nil {
			t.Fatal(err)
		}
		if n, want := tr.StateSize(), len(tr.State()); n != want {
			t.Fatalf("after event %d StateSize is %d; the state's encoding takes %d bytes", i, n, want)
		}
		if tr.open == nil || v1 {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("after event %d the mirror differs from the bridge's state (-bridge +mirror):\n%s", i, diff)
			}
		}
		if got.(map[string]any)["client"] == nil {
			t.Fatal("the client's own key was touched")
		}
	}
}

func TestStateMirrorProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		data := make([]byte, r.IntN(60))
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		for _, v1 := range []bool{false, true} {
			checkMirror(t, v1, dataUpdates(data))
		}
	}
}

func FuzzStateMirror(f *testing.F) {
	f.Add([]byte{0, 1, 16, 1, 1, 2, 17, 2, 2, 0, 3, 1})
	f.Add([]byte{16, 3, 16, 3, 0, 5, 16, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v1 := range []bool{false, true} {
			checkMirror(t, v1, dataUpdates(data))
		}
	})
}
