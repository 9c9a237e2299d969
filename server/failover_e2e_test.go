package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/internal/redistest"
)

// TestScaleOutSentinelFailover: two instances share a Sentinel-watched
// primary with two replicas (store.waitReplicas: 1). Concurrent streaming
// runs are followed live by their clients, and the primary is SIGKILLed
// mid-run. Sentinel promotes a replica; every run then either finishes
// whole or ends with a RUN_ERROR carrying a code, and every event a client
// was shown is in the thread's journal afterwards, at the same sequence
// number with the same bytes: the failover lost nothing anyone saw.
func TestScaleOutSentinelFailover(t *testing.T) {
	t.Parallel()
	bridgeBin, demoBin := buildBinaries(t)
	demo := startDemoAgents(t, demoBin)
	st, err := redistest.StartSentinel(t.Context(), t.TempDir(), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	store := fmt.Sprintf("{kind: redis, url: %q, lease: 5s, waitReplicas: 1}",
		"redis-sentinel://"+strings.Join(st.SentinelAddrs(), ",")+"/"+st.Master)
	c := newClusterOn(t, bridgeBin, demo, 2, store, "counter")

	// counter streams "1 " … "100 ", one chunk every 100ms: ten seconds.
	const runs = 8
	type client struct {
		thread string
		shown  []sseFrame
	}
	clients := make([]*client, runs)
	var wg sync.WaitGroup
	streaming := make(chan struct{}, runs)
	for i := range runs {
		cl := &client{thread: fmt.Sprintf("th-failover-%d", i)}
		clients[i] = cl
		lr := c.bridge(i%2).open(t, "counter", runBody(cl.thread, "run-1", true, userMsg("u1", "count")))
		wg.Go(func() {
			content := false
			timeout := time.After(90 * time.Second)
			for {
				select {
				case f, ok := <-lr.frames:
					if !ok {
						if !content {
							streaming <- struct{}{}
						}
						return
					}
					cl.shown = append(cl.shown, f)
					if !content && strings.Contains(f.data, `"TEXT_MESSAGE_CONTENT"`) {
						content = true
						streaming <- struct{}{}
					}
				case <-timeout:
					t.Errorf("%s: the client's stream did not end within 90s", cl.thread)
					lr.cancel()
					return
				}
			}
		})
	}
	for range runs {
		<-streaming
	}
	killed := time.Now()
	t.Logf("kill -9 the primary %s", st.Primary.Addr)
	st.Primary.Kill()
	wg.Wait()
	t.Logf("every client stream ended %v after the kill", time.Since(killed).Round(time.Millisecond))

	finished, failed := 0, 0
	for _, cl := range clients {
		journal := c.journal(t, 0, "counter", cl.thread)
		for i, f := range journal {
			// A run that gave events up to the outage ends with
			// store_unavailable, numbered after them: a write whose
			// answer was lost may have landed (DEPLOY.md, "Store outages").
			gaveUp := i == len(journal)-1 && f.seq > int64(i+1) && strings.Contains(f.data, `"code":"store_unavailable"`)
			if f.seq != int64(i+1) && !gaveUp {
				t.Fatalf("%s: journal frame %d has id %d: a gap or a repeat; it holds %s", cl.thread, i, f.seq, f.data)
			}
		}
		for _, f := range cl.shown {
			if f.seq == 0 {
				continue // the closing events of a cut stream carry no id and are not journaled
			}
			if f.seq > int64(len(journal)) || journal[f.seq-1].data != f.data {
				t.Fatalf("%s: the client was shown event %d, which the journal does not hold as shown:\n%s", cl.thread, f.seq, f.data)
			}
		}
		events := decodeFrames(t, journal)
		if err := agui.CheckStream(true, events); err != nil {
			t.Errorf("%s: the journal is not one valid run: %v", cl.thread, err)
			continue
		}
		r := runResult{events: events}
		switch last := r.last(); last.Type() {
		case agui.EventRunFinished:
			if got, want := r.text(), agents.CounterText(agents.DefaultCounterCount); got != want {
				t.Errorf("%s: finished with text %q, want %q", cl.thread, got, want)
			}
			finished++
		case agui.EventRunError:
			var e struct{ Code, Message string }
			raw, _ := json.Marshal(last)
			_ = json.Unmarshal(raw, &e)
			if e.Code == "" || e.Message == "" {
				t.Errorf("%s: RUN_ERROR without a code and message: %s", cl.thread, raw)
			}
			t.Logf("%s: ended with RUN_ERROR %s: %s", cl.thread, e.Code, e.Message)
			failed++
		default:
			t.Errorf("%s: the journal ends with %s", cl.thread, last.Type())
		}
	}
	now, err := st.CurrentPrimary(t.Context())
	if err != nil || now == st.Primary.Addr {
		t.Errorf("the Sentinels hold the primary at %s (%v); want a promoted replica", now, err)
	}
	t.Logf("%d runs finished whole, %d ended with an error; primary now %s", finished, failed, now)
}
