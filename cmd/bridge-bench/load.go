package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// outcome is one run as the load loop sees it.
type outcome struct {
	chunks int64         // events that carried a streamed chunk
	events int64         // all events
	ttfe   time.Duration // from sending the request to the first chunk; 0 when none came
	err    error         // why the run did not end as it should, or nil
	// latency holds, per stamped chunk, the µs from the agent's stamp
	// (when it handed the chunk to its transport) to when the reader had it.
	latency []int64
}

// runFunc performs one run.
type runFunc func(ctx context.Context) outcome

// loadResult sums the runs of one phase.
type loadResult struct {
	Runs        int             `json:"runs"`
	Failed      int             `json:"failed"`
	Chunks      int64           `json:"chunks"`
	Events      int64           `json:"events"`
	Wall        time.Duration   `json:"wallNs"`
	ErrorSample string          `json:"errorSample,omitempty"`
	TTFE        []time.Duration `json:"ttfeNs,omitempty"`
	// LatencyUs: per chunk of every run, agent write → reader read, in µs.
	LatencyUs []int64 `json:"latencyUs,omitempty"`
}

func (r *loadResult) add(o outcome) {
	r.Runs++
	r.Chunks += o.chunks
	r.Events += o.events
	r.LatencyUs = append(r.LatencyUs, o.latency...)
	if o.err != nil {
		r.Failed++
		if r.ErrorSample == "" {
			r.ErrorSample = o.err.Error()
		}
	}
}

// runLoad performs n runs, c at a time, and reports them with the wall time
// from the first request to the end of the last run. It stops starting runs
// once ctx is done.
func runLoad(ctx context.Context, n, c int, run runFunc) loadResult {
	var (
		next int64
		mu   sync.Mutex
		res  loadResult
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range min(c, n) {
		wg.Go(func() {
			for atomic.AddInt64(&next, 1) <= int64(n) && ctx.Err() == nil {
				o := run(ctx)
				mu.Lock()
				res.add(o)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.Wall = time.Since(start)
	return res
}

// runSequential performs n runs one after the other, with nothing else in
// flight, and records each successful run's time to first chunk.
func runSequential(ctx context.Context, n int, run runFunc) loadResult {
	var res loadResult
	start := time.Now()
	for range n {
		if ctx.Err() != nil {
			break
		}
		o := run(ctx)
		res.add(o)
		if o.err == nil && o.ttfe > 0 {
			res.TTFE = append(res.TTFE, o.ttfe)
		}
	}
	res.Wall = time.Since(start)
	return res
}

// sseTarget is an SSE endpoint: the bridge's /agents/NAME or the peer
// (AG-UI), or the relay (the agent's A2A JSON-RPC stream).
type sseTarget struct {
	url      string
	client   *http.Client
	classify classifier
	body     func() []byte // one run's request body
	a2a      bool          // an A2A v1.0 JSON-RPC request, not AG-UI's RunAgentInput
	chunks   int           // chunk-bearing events each run must carry
}

// runInput is the body of one run: a new thread each time, so no run waits
// for another (the bridge allows one active run per thread) and none carries
// history.
func runInput() []byte {
	b, _ := json.Marshal(map[string]any{
		"threadId": "bench-" + uuid.NewString(),
		"runId":    uuid.NewString(),
		"messages": []map[string]string{{"id": "m1", "role": "user", "content": "go"}},
	})
	return b
}

// a2aStreamRequest is an A2A v1.0 JSON-RPC SendStreamingMessage with a new
// message, the request the relay passes to the agent.
func a2aStreamRequest() []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      1,
		"method":  "SendStreamingMessage",
		"params": map[string]any{"message": map[string]any{
			"messageId": uuid.NewString(), "role": "ROLE_USER", "parts": []map[string]string{{"text": "go"}},
		}},
	})
	return b
}

// postRun starts one run with body; the caller closes the response body.
// a2a adds the A2A-Version header a v1.0 request must carry.
func postRun(ctx context.Context, client *http.Client, url string, body []byte, a2a bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if a2a {
		req.Header.Set("A2A-Version", "1.0")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, &httpStatusError{code: resp.StatusCode, body: string(bytes.TrimSpace(body))}
	}
	return resp, nil
}

type httpStatusError struct {
	code int
	body string
}

func (e *httpStatusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

// run performs one run and reads its SSE stream to the end, which must be
// RUN_FINISHED (for the relay: TASK_STATE_COMPLETED) after exactly t.chunks
// chunk-bearing events.
func (t *sseTarget) run(ctx context.Context) outcome {
	start := time.Now()
	resp, err := postRun(ctx, t.client, t.url, t.body(), t.a2a)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	var (
		o        outcome
		last     eventClass
		runError string
	)
	// Large reads: the throughput phase reads hundreds of events a second
	// per stream.
	events := newSSEReader(resp.Body, 32<<10)
	for {
		data, err := events.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			o.err = fmt.Errorf("reading the stream after %d events: %w", o.events, err)
			return o
		}
		class, desc, err := t.classify(data)
		if err != nil {
			o.err = err
			return o
		}
		o.events++
		switch class {
		case classChunk:
			// An event may carry several chunks: the bridge merges text
			// deltas that queued while its store was busy.
			stamps := chunkStamps(data)
			o.chunks += int64(max(len(stamps), 1))
			if o.ttfe == 0 {
				o.ttfe = time.Since(start)
			}
			now := time.Now().UnixMicro()
			for _, stamp := range stamps {
				o.latency = append(o.latency, now-stamp)
			}
		case classError:
			runError = desc
		}
		last = class
	}
	switch {
	case runError != "":
		o.err = errors.New(runError)
	case last != classFinished:
		o.err = fmt.Errorf("stream ended after %d events without RUN_FINISHED", o.events)
	case o.chunks != int64(t.chunks):
		o.err = fmt.Errorf("%d chunk events, want %d", o.chunks, t.chunks)
	}
	return o
}
