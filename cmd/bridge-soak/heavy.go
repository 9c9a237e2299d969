package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a2a-agui-bridge/bridge/errcode"
)

// The CPU-heavy agent of issue 33 (agents.Heavy) under abuse: runs of its
// two shapes, one after the other, each timed in the bridge's CPU. A run
// of "parts" (one event of 100,000 small data parts) must end with
// state_too_large, found while merging; one of "deltas" (a 190 KB data
// artifact, then 20,000 one-key updates) must finish. The CPU per run is
// the bridge's over the run, so it includes whatever else the soak had
// it do meanwhile: an upper bound.

const heavyName = "heavy"

// heavyShapes are agents.Heavy's shapes, and the endings each may have.
var heavyShapes = []struct {
	name    string
	endings []string
}{
	{"parts", []string{errcode.StateTooLarge}},
	{"deltas", []string{"finished"}},
}

// heavyTally counts one shape's runs.
type heavyTally struct {
	Runs          int64            `json:"runs"`
	Endings       map[string]int64 `json:"endings"` // "finished" or the RUN_ERROR code
	CPUSeconds    float64          `json:"bridgeCPUSeconds"`
	MaxCPUSeconds float64          `json:"maxBridgeCPUSecondsPerRun"`
	MaxSeconds    float64          `json:"maxSeconds"`
}

func (a *abuser) heavyWorker(ctx context.Context, k int) {
	ctx = withKey(ctx, keyOf(mallory))
	for i, shape := range heavyShapes {
		if ctx.Err() != nil {
			return
		}
		n := a.heavyRuns.Add(1)
		thread := fmt.Sprintf("heavy-%d-%d", k, n)
		cpu0, t0 := a.cpu(), time.Now()
		ending, err := a.heavyRun(ctx, thread, shape.name)
		if ctx.Err() != nil {
			return
		}
		cpu, took := a.cpu()-cpu0, time.Since(t0)
		if err != nil {
			a.violate("heavy "+shape.name, err.Error())
			continue
		}
		a.tally(func(r *abuseReport) {
			t := r.Heavy[heavyShapes[i].name]
			t.Runs++
			t.Endings[ending]++
			t.CPUSeconds += cpu
			t.MaxCPUSeconds = max(t.MaxCPUSeconds, cpu)
			t.MaxSeconds = max(t.MaxSeconds, took.Seconds())
		})
		ok := false
		for _, e := range shape.endings {
			ok = ok || e == ending
		}
		if !ok && ending != errcode.RateLimited {
			a.violate("heavy "+shape.name+" ending", fmt.Sprintf("thread %s ended with %s; want %v", thread, ending, shape.endings))
		}
	}
}

// heavyRun posts one run of shape and reads it to its end: "finished",
// or the RUN_ERROR code, or the refusal's code.
func (a *abuser) heavyRun(ctx context.Context, thread, shape string) (string, error) {
	in := map[string]any{"threadId": thread, "runId": "r1",
		"messages": []map[string]any{{"id": "u1", "role": "user", "content": shape}}}
	b, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/agents/"+heavyName, bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	authorize(req)
	resp, err := a.fast.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
			return e.Error.Code, nil
		}
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	ending := ""
	for {
		line, err := br.ReadString('\n')
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			var ev struct{ Type, Code string }
			if json.Unmarshal([]byte(data), &ev) == nil {
				switch ev.Type {
				case "RUN_FINISHED":
					ending = "finished"
				case "RUN_ERROR":
					ending = ev.Code
				}
			}
		}
		if err != nil {
			break
		}
	}
	if ending == "" {
		return "", fmt.Errorf("thread %s: the stream ended without RUN_FINISHED or RUN_ERROR", thread)
	}
	return ending, nil
}
