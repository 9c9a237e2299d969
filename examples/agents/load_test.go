package agents

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"
)

// loaderClient serves exec over JSON-RPC 1.0 and returns a client for it.
func loaderClient(t *testing.T, exec a2asrv.AgentExecutor) *a2aclient.Client {
	t.Helper()
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(exec)))
	t.Cleanup(srv.Close)
	client, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{
		a2a.NewAgentInterface(srv.URL, a2a.TransportProtocolJSONRPC),
	})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return client
}

func TestLoaderChunks(t *testing.T) {
	t.Parallel()
	client := loaderClient(t, Loader{Chunks: 3})
	got, _ := collect(t, client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("go"))))
	want := []string{
		"task SUBMITTED artifacts=0",
		"status WORKING",
		`artifact answer append=false last=false: "w0 "`,
		`artifact answer append=true last=false: "w1 "`,
		`artifact answer append=true last=true: "w2 "`,
		"status COMPLETED",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A slow Loader keeps its task open until released, then closes the artifact
// at once instead of waiting for the next interval.
func TestLoaderRelease(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	client := loaderClient(t, Loader{Chunks: 1, Interval: time.Hour, Hold: time.Millisecond, Release: release})
	var got []string
	for ev, err := range client.SendStreamingMessage(t.Context(), userMessage(a2a.NewTextPart("go"))) {
		if err != nil {
			t.Fatalf("stream error after %q: %v", got, err)
		}
		got = append(got, describe(ev))
		if len(got) == 3 { // the first chunk: every stream is open
			close(release)
		}
	}
	want := []string{
		"task SUBMITTED artifacts=0",
		"status WORKING",
		`artifact answer append=false last=false: "w0 "`,
		`artifact answer append=true last=true: "w1 "`,
		"status COMPLETED",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
