package tasks

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
)

// BenchmarkRunStream drives whole runs of a scripted agent streaming 500
// artifact chunks through the service and reads them back as a client
// does: the bridge's cost per streamed token, storage included.
func BenchmarkRunStream(b *testing.B) {
	const chunks = 500
	stream := []scripted{{ev: task(a2a.TaskStateWorking, "")}}
	for i := range chunks {
		stream = append(stream, scripted{ev: chunk("token "+strconv.Itoa(i)+" ", i > 0)})
	}
	stream = append(stream, scripted{ev: status(a2a.TaskStateCompleted)})
	for _, kind := range []string{"memory", "embedded"} {
		b.Run(kind, func(b *testing.B) {
			var store Store = NewMemoryStore()
			if kind == "embedded" {
				s, err := OpenBoltStore(filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				store = s
			}
			defer store.Close()
			agent := &scriptedAgent{streaming: true, stream: stream}
			svc := NewService(Options{Store: store, ExclusiveStore: true, Agents: []AgentSpec{{Name: "a",
				Connect: func(context.Context) (Agent, error) { return agent, nil }}}})
			defer svc.Close(context.Background())
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				run, err := svc.StartRun(context.Background(), "a", input("th-"+strconv.Itoa(n), "r"))
				if err != nil {
					b.Fatal(err)
				}
				for _, err := range run.Events(context.Background()) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*chunks), "ns/chunk")
		})
	}
}
