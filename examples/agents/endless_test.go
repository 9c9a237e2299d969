package agents

import (
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
)

func TestEndlessChunk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		i, size int
		want    string
	}{
		{0, 8, "e0..... "},
		{12, 8, "e12.... "},
		{12345678, 4, "e12345678 "}, // never shorter than its number
	} {
		if got := EndlessChunk(tc.i, tc.size); got != tc.want {
			t.Errorf("EndlessChunk(%d, %d) = %q, want %q", tc.i, tc.size, got, tc.want)
		}
	}
	if got := len(EndlessChunk(7, 1024)); got != 1024 {
		t.Errorf("a 1 KiB chunk has %d bytes", got)
	}
}

// Endless keeps appending to its one artifact until the task is
// cancelled, and a cancel ends its stream with CANCELED.
func TestEndlessUntilCancelled(t *testing.T) {
	t.Parallel()
	// A pause per chunk, or the agent runs thousands of chunks ahead of
	// the cancel in a2asrv's queue.
	client := loaderClient(t, Endless{ChunkBytes: 16, Interval: time.Millisecond})
	var got []string
	var task a2a.TaskID
	for ev, err := range client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("go"))) {
		if err != nil {
			t.Fatalf("stream error after %q: %v", got, err)
		}
		if len(got) > 2000 {
			t.Fatal("the stream went on after the cancel")
		}
		if len(got) == 0 {
			task = ev.TaskInfo().TaskID
		}
		if up, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && len(got) > 5 {
			// Past the first chunks the stream is only more of the same.
			if !up.Append || up.LastChunk || !strings.HasSuffix(up.Artifact.Parts[0].Text(), ". ") {
				t.Fatalf("chunk %s", describe(ev))
			}
			if len(got) == 20 {
				if _, err := client.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task}); err != nil {
					t.Fatalf("cancel: %v", err)
				}
			}
			got = append(got, "…")
			continue
		}
		got = append(got, describe(ev))
	}
	want := []string{
		"task SUBMITTED artifacts=0",
		"status WORKING",
		`artifact answer append=false last=false: "e0............. "`,
		`artifact answer append=true last=false: "e1............. "`,
		`artifact answer append=true last=false: "e2............. "`,
		`artifact answer append=true last=false: "e3............. "`,
	}
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if last := got[len(got)-1]; last != "status CANCELED" {
		t.Errorf("the stream ended with %q, want status CANCELED", last)
	}
}
