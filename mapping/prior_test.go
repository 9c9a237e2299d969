package mapping

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// TestTakeOver cuts every golden script at every point, as a bridge that
// dies mid-run would: the first translator's output is the journal; a
// second translator built from that journal (Options.Prior) then gets what
// an agent's SubscribeToTask gives — a Task snapshot of the moment, then
// the rest of the events. The journal and the continuation together must
// be one valid run that ends once and shows the same assistant text as the
// uncut run: nothing lost, nothing repeated.
func TestTakeOver(t *testing.T) {
	t.Parallel()
	scripts, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range scripts {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts, events := readScript(t, path)
			want := assistantText(translateAll(opts, events))
			for k := 1; k < len(events); k++ {
				checkTakeOver(t, opts, events, k, want)
			}
		})
	}
}

// checkTakeOver runs one cut at k (see TestTakeOver).
func checkTakeOver(t *testing.T, opts scriptOptions, events []a2a.Event, k int, want string) {
	t.Helper()
	first := New(scriptTranslatorOptions(opts))
	journal := first.Start()
	for _, ev := range events[:k] {
		journal = append(journal, first.Translate(ev)...)
	}
	snapshot := foldTask(events[:k])
	if first.Done() || snapshot == nil {
		return // nothing to take over, or no task to reattach to
	}
	o := scriptTranslatorOptions(opts)
	o.Prior = roundTrip(t, journal)
	second := New(o)
	out := append([]agui.Event(nil), journal...)
	out = append(out, second.Translate(snapshot)...)
	for _, ev := range events[k:] {
		out = append(out, second.Translate(ev)...)
	}
	if !second.Done() {
		out = append(out, second.Fail("a2a_incomplete", "the script ended before the task did")...)
	}
	if err := agui.CheckStream(opts.V1, out); err != nil {
		t.Fatalf("cut at %d: %v\n%s", k, err, dump(t, out))
	}
	terminals := 0
	for _, e := range out {
		if isTerminal(e) {
			terminals++
		}
	}
	if terminals != 1 {
		t.Fatalf("cut at %d: %d terminal events", k, terminals)
	}
	if got := assistantText(out); normalize(got) != normalize(want) {
		t.Fatalf("cut at %d: the assistant text differs from the uncut run\nwant %q\ngot  %q\n%s", k, want, got, dump(t, out))
	}
}

// foldTask is the task a server holds after events: its status is the
// latest one, artifacts hold every part they received (append adds parts,
// else the artifact is replaced). nil while no event named the task.
func foldTask(events []a2a.Event) *a2a.Task {
	var task *a2a.Task
	for _, ev := range events {
		switch e := ev.(type) {
		case *a2a.Task:
			c := *e
			c.Artifacts = append([]*a2a.Artifact(nil), e.Artifacts...)
			task = &c
		case *a2a.StatusUpdate:
			if task == nil {
				task = &a2a.Task{ID: e.TaskID, ContextID: e.ContextID}
			}
			task.Status = e.Status
		case *a2a.ArtifactUpdate:
			if task == nil {
				task = &a2a.Task{ID: e.TaskID, ContextID: e.ContextID}
			}
			if e.Artifact == nil {
				continue
			}
			i := -1
			for j, a := range task.Artifacts {
				if a.ID == e.Artifact.ID {
					i = j
				}
			}
			switch {
			case i < 0:
				c := *e.Artifact
				task.Artifacts = append(task.Artifacts, &c)
			case e.Append:
				c := *task.Artifacts[i]
				c.Parts = append(append([]*a2a.Part(nil), c.Parts...), e.Artifact.Parts...)
				task.Artifacts[i] = &c
			default:
				c := *e.Artifact
				task.Artifacts[i] = &c
			}
		}
	}
	if task == nil || task.ID == "" {
		return nil
	}
	return task
}

// roundTrip encodes and decodes events, as a journal stores and returns them.
func roundTrip(t testing.TB, events []agui.Event) []agui.Event {
	t.Helper()
	out := make([]agui.Event, 0, len(events))
	for _, e := range events {
		raw, err := agui.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		d, err := agui.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		out = append(out, d)
	}
	return out
}

// FuzzTakeOver: whatever the events and wherever a run is taken over, the
// journal and the continuation form one stream every client generation
// accepts, ending exactly once.
func FuzzTakeOver(f *testing.F) {
	f.Add([]byte{0, 0x12, 1, 0x13, 2, 0x01, 15, 0x10}, uint8(2))
	f.Add([]byte{3, 0x01, 1, 0x12, 1, 0x13, 5, 0x14, 2, 0x11, 15, 0x10}, uint8(3))
	f.Add([]byte{5, 0x14, 5, 0x15, 10, 0x02, 20, 0x16}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		events := scriptFromBytes(data)
		if len(events) < 2 {
			return
		}
		k := 1 + int(cut)%(len(events)-1)
		for _, v1 := range []bool{false, true} {
			for _, policy := range []StatusTextPolicy{StatusAsMessage, StatusHidden} {
				opts := Options{ThreadID: "t", RunID: "r", V1: v1, StatusText: policy}
				first := New(opts)
				journal := first.Start()
				for _, ev := range events[:k] {
					journal = append(journal, first.Translate(ev)...)
				}
				snapshot := foldTask(events[:k])
				if first.Done() || snapshot == nil {
					continue
				}
				opts.Prior = roundTrip(t, journal)
				second := New(opts)
				out := append([]agui.Event(nil), journal...)
				out = append(out, second.Translate(snapshot)...)
				for _, ev := range events[k:] {
					out = append(out, second.Translate(ev)...)
				}
				out = append(out, second.Fail("a2a_incomplete", "ended")...)
				if err := agui.CheckStream(v1, out); err != nil {
					t.Fatalf("v1=%v policy=%s cut=%d: %v\n%s", v1, policy, k, err, dump(t, out))
				}
				if last := out[len(out)-1].Type(); last != agui.EventRunFinished && last != agui.EventRunError {
					t.Fatalf("stream does not end with a terminal event: %s", last)
				}
			}
		}
	})
}

func dump(t testing.TB, out []agui.Event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range out {
		raw, err := agui.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}
