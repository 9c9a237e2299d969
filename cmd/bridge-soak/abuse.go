package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/errcode"
)

// abuseSettings size the hostile clients of -abuse.
type abuseSettings struct {
	on              bool
	endless         int           // endless runs read over SSE at once
	endlessInterval time.Duration // the endless agent's pause between 1 KiB chunks
	endlessTimeout  time.Duration // the endless agent's timeouts.run
	maxRunBytes     int64         // limits.maxRunBytes; 0 leaves the key out
	stall           time.Duration // how long a stalling reader stops reading
	floods          int           // WebSocket connections flooding frames
	floodFrames     int           // frames in one burst
	slowBodies      int           // slow request bodies in flight
	slowloris       int           // slow request headers in flight
	oversized       int           // clients posting bodies over the limit
	rate            float64       // limits.perPrincipal.requestsPerSecond; 0: none
	heavy           int           // workers running the CPU-heavy agent (heavy.go)
}

func (a *abuseSettings) flags(fs *flag.FlagSet) {
	fs.BoolVar(&a.on, "abuse", false, "run hostile clients beside the honest workers: endless agents read slowly, WebSocket floods, slow bodies and headers, oversized bodies")
	fs.IntVar(&a.endless, "endless", 4, "with -abuse: endless runs read over SSE at once (half stall, half leave)")
	fs.DurationVar(&a.endlessInterval, "endless-interval", 2*time.Millisecond, "with -abuse: the endless agent's pause between 1 KiB chunks (0: back to back)")
	fs.DurationVar(&a.endlessTimeout, "endless-timeout", 30*time.Second, "with -abuse: the endless agent's run timeout (agents[].timeouts.run)")
	fs.Int64Var(&a.maxRunBytes, "max-run-bytes", 0, "with -abuse: set limits.maxRunBytes to this (0: leave the key out, the bridge's default applies)")
	fs.DurationVar(&a.stall, "stall", 25*time.Second, "with -abuse: how long a stalling reader stops reading")
	fs.IntVar(&a.floods, "floods", 2, "with -abuse: WebSocket connections flooding subscribe and run frames")
	fs.IntVar(&a.floodFrames, "flood-frames", 2000, "with -abuse: frames in each burst of a flood (a burst every 5 s while its run lasts)")
	fs.IntVar(&a.slowBodies, "slow-bodies", 4, "with -abuse: request bodies trickled a byte a second, in flight at once")
	fs.IntVar(&a.slowloris, "slowloris", 2, "with -abuse: request headers trickled a byte a second, in flight at once")
	fs.IntVar(&a.oversized, "oversized", 1, "with -abuse: clients posting 2 MiB bodies (over the 1 MiB limit)")
	fs.IntVar(&a.heavy, "heavy", 1, "with -abuse: workers running the CPU-heavy agent of issue 33 (one event of 100,000 data parts; 20,000 small state changes beside 190 KB), each run timed in the bridge's CPU")
	fs.Float64Var(&a.rate, "abuse-rate", 100, "with -abuse: limits.perPrincipal.requestsPerSecond (burst twice that); 0: no rate limit")
}

const (
	endlessName = "endless"
	// codeRunTooLarge ends a run past limits.maxRunBytes (issue 20).
	codeRunTooLarge = errcode.RunTooLarge
	// floodEvery is the pause between a flood's bursts.
	floodEvery = 5 * time.Second
	// restSlack is how long past its run timeout an endless run may take
	// to end (the cancel, the journal's last writes) before it is a
	// violation.
	restSlack = 60 * time.Second
)

// allowedEnding reports the RUN_ERROR codes an endless run may end with:
// the run budget, or the run timeout where no budget is set (or it is
// larger than what the run produced in its time).
func allowedEnding(code string) bool {
	return code == codeRunTooLarge || code == agui.CodeAgentTimeout
}

// allowedRefusal reports the RUN_ERROR codes a flood's frame may be
// refused with: over the connection's or the principal's stream caps, over
// the request rate, a run on a thread whose run is in progress, a
// subscription to a thread that does not exist.
func allowedRefusal(code string) bool {
	switch code {
	case agui.CodeTooManyStreams, agui.CodeRateLimited, agui.CodeThreadBusy, agui.CodeUnknownThread:
		return true
	}
	return false
}

// abuseReport is what the hostile clients met. Violations are answers
// outside what the bridge promises (a run not ended by its bounds, a frame
// refused with another code, a slow body not cut); any makes the soak
// fail.
type abuseReport struct {
	MaxRunBytes    int64                  `json:"maxRunBytes,omitempty"` // 0: the key was not set
	EndlessTimeout string                 `json:"endlessTimeout"`
	Endless        endlessTally           `json:"endless"`
	Floods         floodTally             `json:"floods"`
	SlowBodies     probeTally             `json:"slowBodies"`
	Slowloris      probeTally             `json:"slowloris"`
	Oversized      probeTally             `json:"oversized"`
	Heavy          map[string]*heavyTally `json:"heavy"`
	Violations     map[string]int64       `json:"violations"`
	Samples        []string               `json:"violationSamples,omitempty"`

	want abuseSettings
}

// endlessTally counts the runs of the endless agent, over SSE and on the
// flood connections.
type endlessTally struct {
	Runs       int64            `json:"runs"`               // ended and checked
	Endings    map[string]int64 `json:"endings"`            // by RUN_ERROR code
	Dropped    int64            `json:"droppedSlowReaders"` // stalled SSE readers the bridge cut off
	Left       int64            `json:"leftOnPurpose"`      // SSE readers that disconnected after a few KiB
	Refused    map[string]int64 `json:"refused,omitempty"`  // POSTs refused, by status (retried)
	MaxSeconds float64          `json:"maxSeconds"`         // the longest run, from its POST to its end
	TailMiB    float64          `json:"tailMiB"`            // journal read back after the readers left
}

// floodTally counts the flood connections' frames and the bridge's answers.
type floodTally struct {
	Connections int64            `json:"connections"`
	Frames      int64            `json:"frames"`
	Refusals    map[string]int64 `json:"refusals"`                 // by RUN_ERROR code
	Closed      map[string]int64 `json:"closedByBridge,omitempty"` // by close code
}

// probeTally counts slow or oversized requests by the bridge's answer.
type probeTally struct {
	Requests   int64            `json:"requests"`   // answered or cut
	Answers    map[string]int64 `json:"answers"`    // HTTP status, or "closed" (no answer)
	MaxSeconds float64          `json:"maxSeconds"` // the longest until the answer or the close
}

func (t *probeTally) note(answer string, took time.Duration) {
	t.Requests++
	t.Answers[answer]++
	t.MaxSeconds = max(t.MaxSeconds, took.Seconds())
}

// ok: no violation, and every kind of abuse asked for was met at least
// once (a soak too short for it proves nothing).
func (r *abuseReport) ok() bool {
	return len(r.Violations) == 0 &&
		(r.want.endless+r.want.floods == 0 || r.Endless.Runs > 0) &&
		(r.want.floods == 0 || r.Floods.Frames > 0) &&
		(r.want.slowBodies == 0 || r.SlowBodies.Requests > 0) &&
		(r.want.slowloris == 0 || r.Slowloris.Requests > 0) &&
		(r.want.oversized == 0 || r.Oversized.Requests > 0) &&
		(r.want.heavy == 0 || r.Heavy["parts"].Runs > 0 && r.Heavy["deltas"].Runs > 0)
}

func (r *abuseReport) print(w io.Writer) {
	budget := "not set"
	if r.MaxRunBytes > 0 {
		budget = strconv.FormatInt(r.MaxRunBytes, 10) + " bytes"
	}
	fmt.Fprintf(w, "  abuse (limits.maxRunBytes %s, endless run timeout %s):\n", budget, r.EndlessTimeout)
	e := r.Endless
	fmt.Fprintf(w, "    endless runs %d, ended by %v, longest %.1f s; slow readers dropped %d, readers that left %d, tail read back %.1f MiB; refused %v\n",
		e.Runs, e.Endings, e.MaxSeconds, e.Dropped, e.Left, e.TailMiB, e.Refused)
	f := r.Floods
	fmt.Fprintf(w, "    floods: %d connections, %d frames, refused %v, closed by the bridge %v\n", f.Connections, f.Frames, f.Refusals, f.Closed)
	for _, p := range []struct {
		name string
		t    probeTally
	}{{"slow bodies", r.SlowBodies}, {"slowloris", r.Slowloris}, {"oversized bodies", r.Oversized}} {
		fmt.Fprintf(w, "    %s: %d, answered %v, longest %.1f s\n", p.name, p.t.Requests, p.t.Answers, p.t.MaxSeconds)
	}
	for _, s := range heavyShapes {
		if h := r.Heavy[s.name]; h != nil && h.Runs > 0 {
			fmt.Fprintf(w, "    heavy %s (issue 33): %d runs, ended by %v; bridge CPU per run %.2f s mean, %.2f s max (an upper bound: the rest of the soak runs meanwhile); longest %.1f s\n",
				s.name, h.Runs, h.Endings, h.CPUSeconds/float64(h.Runs), h.MaxCPUSeconds, h.MaxSeconds)
		}
	}
	fmt.Fprintf(w, "    violations: %d %v\n", total(r.Violations), r.Violations)
	for _, s := range r.Samples {
		fmt.Fprintf(w, "      e.g. %s\n", s)
	}
}

// cuts are the bridge's bounds the slow clients meet: the body deadline
// (aguihttp's BodyReadTimeout) and server.readHeaderTimeout; past one plus
// slack a request not cut is a violation. The slow clients send a byte
// every tick.
type cuts struct {
	body, header, slack, tick time.Duration
}

// bridgeCuts are the bridge's defaults, which the soak's config keeps.
var bridgeCuts = cuts{body: 30 * time.Second, header: 10 * time.Second, slack: 15 * time.Second, tick: time.Second}

// abuser runs the hostile clients against the bridge at base.
type abuser struct {
	base string
	host string
	s    abuseSettings
	cut  cuts
	// slow reads the endless runs: a small receive buffer, so that a
	// stalled reader stops the bridge's writes within kilobytes, and no
	// keep-alive. fast polls and reads the journal back.
	slow, fast *http.Client

	// cpu reads the bridge's CPU seconds so far (heavy.go times runs).
	cpu       func() float64
	heavyRuns atomic.Int64

	mu  sync.Mutex
	rep abuseReport
}

func newAbuser(base string, s abuseSettings) *abuser {
	small := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	u, _ := url.Parse(base)
	return &abuser{
		base: base,
		host: u.Host,
		s:    s,
		cut:  bridgeCuts,
		cpu:  func() float64 { return 0 },
		slow: &http.Client{Transport: &http.Transport{DialContext: small.DialContext, DisableKeepAlives: true}},
		fast: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}},
		rep: abuseReport{
			MaxRunBytes:    s.maxRunBytes,
			EndlessTimeout: s.endlessTimeout.String(),
			Endless:        endlessTally{Endings: map[string]int64{}, Refused: map[string]int64{}},
			Floods:         floodTally{Refusals: map[string]int64{}, Closed: map[string]int64{}},
			SlowBodies:     probeTally{Answers: map[string]int64{}},
			Slowloris:      probeTally{Answers: map[string]int64{}},
			Oversized:      probeTally{Answers: map[string]int64{}},
			Heavy: map[string]*heavyTally{"parts": {Endings: map[string]int64{}},
				"deltas": {Endings: map[string]int64{}}},
			Violations: map[string]int64{},
			want:       s,
		},
	}
}

// start runs every hostile client on wg until ctx ends.
func (a *abuser) start(ctx context.Context, wg *sync.WaitGroup) {
	loop := func(n int, one func(context.Context, int)) {
		for k := range n {
			wg.Go(func() {
				for ctx.Err() == nil {
					one(ctx, k)
				}
			})
		}
	}
	loop(a.s.endless, a.endlessWorker)
	loop(a.s.floods, a.flood)
	loop(a.s.slowBodies, func(ctx context.Context, _ int) { a.slowBody(ctx) })
	loop(a.s.slowloris, func(ctx context.Context, _ int) { a.slowHeaders(ctx) })
	loop(a.s.oversized, func(ctx context.Context, k int) { a.oversize(ctx, k) })
	loop(a.s.heavy, a.heavyWorker)
}

func (a *abuser) closeIdle() {
	a.slow.CloseIdleConnections()
	a.fast.CloseIdleConnections()
}

// report is the tally so far; call it once the clients stopped.
func (a *abuser) report() *abuseReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.rep
	return &r
}

func (a *abuser) violate(kind, detail string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rep.Violations[kind]++
	if len(a.rep.Samples) < 10 {
		a.rep.Samples = append(a.rep.Samples, kind+": "+detail)
	}
}

func (a *abuser) tally(f func(r *abuseReport)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(&a.rep)
}

// warmUp runs the abuse's paths once, so that the baseline holds what
// they set up for good (the endless agent's client, the WebSocket route):
// one endless run read a little and cancelled, one WebSocket connection.
func (a *abuser) warmUp(ctx context.Context) error {
	ctx = withKey(ctx, keyOf(mallory))
	resp, err := a.postRun(ctx, a.fast, "warmup-endless", "r1", 1)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("endless run: status %d", resp.StatusCode)
	}
	t := newTail()
	br := bufio.NewReader(resp.Body)
	if err := t.read(br, 8<<10); err != nil {
		return err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/agents/"+endlessName+"/threads/warmup-endless/cancel", nil)
	authorize(req)
	cresp, err := a.fast.Do(req)
	if err != nil {
		return err
	}
	cresp.Body.Close()
	if err := t.read(br, -1); err != nil {
		return err
	}
	if len(t.terminals) != 1 {
		return fmt.Errorf("the cancelled endless run ended with %d terminal events", len(t.terminals))
	}
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, a.wsURL(), http.Header{"Authorization": {"Bearer " + keyOf(flooder)}})
	if err != nil {
		return err
	}
	return conn.Close()
}

func (a *abuser) wsURL() string {
	return "ws://" + a.host + "/agents/" + endlessName + "/ws"
}

// endlessInput is run n of an endless thread: one new user message.
func endlessInput(thread, runID string, n int) map[string]any {
	return map[string]any{"threadId": thread, "runId": runID,
		"messages": []map[string]any{{"id": fmt.Sprintf("u%d", n), "role": "user", "content": "Go on forever"}}}
}

func (a *abuser) postRun(ctx context.Context, c *http.Client, thread, runID string, n int) (*http.Response, error) {
	b, _ := json.Marshal(endlessInput(thread, runID, n))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/agents/"+endlessName, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	authorize(req)
	return c.Do(req)
}

// endlessWorker runs the endless agent on its own thread, one run after
// the other (a long-lived thread: its journal and record must stay
// bounded too), read by a slow client: even workers read 64 KiB and stall,
// so the bridge must drop them; odd ones read 16 KiB and leave. Either
// way the run goes on without a reader until its bound ends it; the worker
// waits for that, reads the rest of the journal back and checks the end.
func (a *abuser) endlessWorker(ctx context.Context, k int) {
	thread := fmt.Sprintf("endless-%d", k)
	stall := k%2 == 0
	ctx = withKey(ctx, keyOf(mallory))
	for n := 1; ctx.Err() == nil; n++ {
		a.endlessRun(ctx, thread, n, stall)
	}
}

func (a *abuser) endlessRun(ctx context.Context, thread string, n int, stall bool) {
	started := time.Now()
	resp, err := a.postRun(ctx, a.slow, thread, fmt.Sprintf("r%d", n), n)
	if err != nil {
		if ctx.Err() == nil {
			a.violate("endless: transport", err.Error())
			sleep(ctx, time.Second)
		}
		return
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			a.tally(func(r *abuseReport) { r.Endless.Refused[strconv.Itoa(resp.StatusCode)]++ })
		case http.StatusConflict:
			// The thread's last run goes on though this worker saw it
			// end (a violation noted then): wait for it, once.
			a.violate("endless: thread busy", string(b))
			_ = a.waitAtRest(ctx, thread, time.Now().Add(a.s.endlessTimeout+restSlack))
		default:
			a.violate(fmt.Sprintf("endless: status %d", resp.StatusCode), string(b))
		}
		sleep(ctx, time.Second)
		return
	}
	t := newTail()
	br := bufio.NewReaderSize(resp.Body, 16<<10)
	limit := int64(16 << 10)
	if stall {
		limit = 64 << 10
	}
	err = t.read(br, limit)
	if len(t.terminals) == 0 && err == nil {
		if stall {
			if !sleep(ctx, a.s.stall) {
				resp.Body.Close()
				return
			}
			// The bridge dropped the reader (the stream stops short of
			// its end), or the run ended meanwhile.
			_ = t.read(br, -1)
			if len(t.terminals) == 0 {
				a.tally(func(r *abuseReport) { r.Endless.Dropped++ })
			}
		} else {
			a.tally(func(r *abuseReport) { r.Endless.Left++ })
		}
	}
	resp.Body.Close()
	a.finish(ctx, thread, t, started)
	// The next run of the thread once this one is over: at once when it
	// ended as the stream said.
	if err := a.waitAtRest(ctx, thread, time.Now().Add(a.s.endlessTimeout+restSlack)); err != nil && ctx.Err() == nil {
		// Named here, so that the next run's 409 is not the first sign.
		a.violate("endless: not at rest after its end", fmt.Sprintf("%s after %.1f s: %v", thread, time.Since(started).Seconds(), err))
	}
}

// finish waits for an endless run whose reader left before its end, reads
// the rest of its journal back, and checks how it ended.
func (a *abuser) finish(ctx context.Context, thread string, t *tail, started time.Time) {
	if ctx.Err() != nil {
		return // the soak is over: nobody waits for this run
	}
	// A terminal event without a sequence number is the bridge ending the
	// client's stream, not the journaled end of the run: the run may go
	// on. The run's own end is still checked.
	if code, ok := t.terminals[0]; ok {
		delete(t.terminals, 0)
		a.violate("endless: stream ended "+code+" outside the journal", thread)
	}
	if len(t.terminals) == 0 {
		before := t.bytes
		if err := a.waitAtRest(ctx, thread, started.Add(a.s.endlessTimeout+restSlack)); err != nil {
			if ctx.Err() == nil {
				a.violate("endless: never ended", err.Error())
			}
			return
		}
		if err := a.readBack(ctx, thread, t); err != nil {
			if ctx.Err() == nil {
				a.violate("endless: read back", err.Error())
			}
			return
		}
		a.tally(func(r *abuseReport) { r.Endless.TailMiB += float64(t.bytes-before) / (1 << 20) })
	}
	took := time.Since(started)
	if len(t.terminals) != 1 {
		a.violate("endless: terminal events", fmt.Sprintf("%s: %d terminal events (%v)", thread, len(t.terminals), t.terminals))
		return
	}
	var code string
	for _, c := range t.terminals {
		code = c
	}
	if !allowedEnding(code) {
		a.violate("endless: ended "+code, fmt.Sprintf("%s after %.1f s", thread, took.Seconds()))
		return
	}
	a.tally(func(r *abuseReport) {
		r.Endless.Runs++
		r.Endless.Endings[code]++
		r.Endless.MaxSeconds = max(r.Endless.MaxSeconds, took.Seconds())
	})
}

// waitAtRest polls the thread until no run is in progress: a long poll
// after a sequence number past any journal answers at once, with done
// true once the thread is at rest.
func (a *abuser) waitAtRest(ctx context.Context, thread string, deadline time.Time) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
			a.base+"/agents/"+endlessName+"/threads/"+thread+"/events?after=9007199254740991", nil)
		req.Header.Set("Accept", "application/json")
		authorize(req)
		resp, err := a.fast.Do(req)
		if err != nil {
			return err
		}
		var p struct {
			Done bool `json:"done"`
		}
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusTooManyRequests:
		case resp.StatusCode != http.StatusOK || err != nil:
			return fmt.Errorf("poll %s: status %d, %v", thread, resp.StatusCode, err)
		case p.Done:
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s still runs %s after its run timeout", thread, restSlack)
		}
		if !sleep(ctx, time.Second) {
			return ctx.Err()
		}
	}
}

// readBack reads the thread's journal after the last event t saw.
func (a *abuser) readBack(ctx context.Context, thread string, t *tail) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("%s/agents/%s/threads/%s/events?after=%d", a.base, endlessName, thread, t.lastSeq), nil)
	req.Header.Set("Accept", "text/event-stream")
	authorize(req)
	resp, err := a.fast.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return t.read(bufio.NewReaderSize(resp.Body, 16<<10), -1)
}

// tail follows one run's events without keeping them: the last sequence
// number, the bytes read, and each distinct terminal event (by sequence
// number; 0 for one the journal does not hold) with its RUN_ERROR code
// ("finished" for RUN_FINISHED).
type tail struct {
	lastSeq   int64
	bytes     int64
	terminals map[int64]string
	seq       int64 // the SSE id of the event being read
}

func newTail() *tail { return &tail{terminals: map[int64]string{}} }

// read reads SSE lines from br until it has read limit bytes (-1: no
// limit), the stream ends, or a terminal event arrives; a stream that
// ends is no error.
func (t *tail) read(br *bufio.Reader, limit int64) error {
	for limit < 0 || t.bytes < limit {
		line, err := br.ReadBytes('\n')
		t.bytes += int64(len(line))
		line = bytes.TrimRight(line, "\n")
		switch {
		case bytes.HasPrefix(line, []byte("id: ")):
			t.seq, _ = strconv.ParseInt(string(line[4:]), 10, 64)
		case bytes.HasPrefix(line, []byte("data: ")):
			seq := t.seq
			t.seq = 0 // the next frame may have no id: not journaled
			if t.event(seq, line[6:]) {
				return nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return nil
}

// event notes one event of the run at seq; it reports a terminal one.
func (t *tail) event(seq int64, data []byte) bool {
	t.lastSeq = max(t.lastSeq, seq)
	if !agui.IsTerminalEvent(data) {
		return false
	}
	var e struct{ Type, Code string }
	_ = json.Unmarshal(data, &e)
	if e.Type == string(agui.EventRunFinished) {
		e.Code = "finished"
	}
	t.terminals[seq] = e.Code
	return true
}

// flood runs one flood connection: a run of the endless agent on a thread
// of its own, then bursts of frames at that thread while the run lasts —
// subscribe (the first a second stream of it, the rest merged), run (the
// thread is busy) and subscribe to threads that do not exist — every
// refusal checked against allowedRefusal, and the run's end checked as
// the endless runs' are.
func (a *abuser) flood(ctx context.Context, k int) {
	ctx = withKey(ctx, keyOf(flooder))
	thread := fmt.Sprintf("flood-%d-%d", k, time.Now().UnixNano())
	started := time.Now()
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, a.wsURL(), http.Header{"Authorization": {"Bearer " + keyOf(flooder)}})
	if err != nil {
		if ctx.Err() == nil && (resp == nil || resp.StatusCode != http.StatusTooManyRequests) {
			a.violate("flood: dial", err.Error())
		}
		sleep(ctx, time.Second)
		return
	}
	a.tally(func(r *abuseReport) { r.Floods.Connections++ })
	fc := &floodConn{a: a, conn: conn, thread: thread, t: newTail(), started: make(chan struct{}), ended: make(chan struct{}),
		runRefused: make(chan string, 16), refusals: map[string]int64{}}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		fc.read()
	}()
	defer func() {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		fc.closing.Store(true)
		_ = conn.Close()
		<-readDone
		a.tally(func(r *abuseReport) {
			for code, n := range fc.refusals {
				r.Floods.Refusals[code] += n
			}
		})
	}()

	// The run: retried while the principal's rate refuses it.
	runFrame, _ := json.Marshal(map[string]any{"type": "run", "input": endlessInput(thread, "r1", 1)})
	for try := 0; ; try++ {
		if err := fc.send(runFrame); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-fc.started:
		case code := <-fc.runRefused:
			if code == agui.CodeRateLimited && try < 10 {
				sleep(ctx, time.Second)
				continue
			}
			a.violate("flood: run refused", code)
			return
		case <-readDone:
			return // read noted why
		case <-time.After(30 * time.Second):
			a.violate("flood: run", "no event 30 s after the run frame")
			return
		}
		break
	}
	for burst := 0; ; burst++ {
		after := fc.seen()
		for i := range a.s.floodFrames {
			var frame string
			switch i % 4 {
			case 0, 1:
				frame = fmt.Sprintf(`{"type":"subscribe","threadId":%q,"after":%d}`, thread, after)
			case 2:
				in, _ := json.Marshal(map[string]any{"threadId": thread, "runId": fmt.Sprintf("dup-%d-%d", burst, i),
					"messages": []map[string]any{{"id": fmt.Sprintf("d%d-%d", burst, i), "role": "user", "content": "again"}}})
				frame = `{"type":"run","input":` + string(in) + `}`
			case 3:
				frame = fmt.Sprintf(`{"type":"subscribe","threadId":"nothing-%d-%d-%d","after":0}`, k, burst, i)
			}
			if fc.send([]byte(frame)) != nil {
				break
			}
			a.tally(func(r *abuseReport) { r.Floods.Frames++ })
		}
		select {
		case <-ctx.Done():
			return
		case <-fc.ended:
			fc.check(ctx, started)
			return
		case <-readDone:
			// The bridge closed the connection; the run goes on: wait
			// for its end as for an SSE reader that left.
			if ctx.Err() == nil {
				a.finish(ctx, thread, fc.t, started)
			}
			return
		case <-time.After(floodEvery):
		}
	}
}

// floodConn is one flood connection's reader state.
type floodConn struct {
	a       *abuser
	conn    *websocket.Conn
	thread  string
	writeMu sync.Mutex
	closing atomic.Bool

	mu         sync.Mutex
	t          *tail // the run r1's events
	startOnce  sync.Once
	endOnce    sync.Once
	started    chan struct{}
	ended      chan struct{}
	runRefused chan string
	refusals   map[string]int64
}

func (fc *floodConn) send(frame []byte) error {
	fc.writeMu.Lock()
	defer fc.writeMu.Unlock()
	_ = fc.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return fc.conn.WriteMessage(websocket.TextMessage, frame)
}

func (fc *floodConn) seen() int64 {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.t.lastSeq
}

// read reads envelopes until the connection ends: r1's journaled events
// (from the run and the subscription, the same sequence numbers) go to
// the tail, refusals (seq 0) are counted by code.
func (fc *floodConn) read() {
	for {
		_, data, err := fc.conn.ReadMessage()
		if err != nil {
			if !fc.closing.Load() {
				code := "none"
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					code = strconv.Itoa(ce.Code)
				}
				fc.a.tally(func(r *abuseReport) { r.Floods.Closed[code]++ })
				// A slow client may be dropped (1013); anything else
				// while the run lasts is the bridge giving up on a client
				// that kept up.
				if code != strconv.Itoa(websocket.CloseTryAgainLater) {
					fc.a.violate("flood: closed by the bridge", err.Error())
				}
			}
			return
		}
		var env struct {
			ThreadID string          `json:"threadId"`
			RunID    string          `json:"runId"`
			Seq      int64           `json:"seq"`
			Event    json.RawMessage `json:"event"`
		}
		if json.Unmarshal(data, &env) != nil {
			fc.a.violate("flood: malformed envelope", string(data[:min(len(data), 200)]))
			continue
		}
		if env.Seq == 0 {
			var e struct{ Type, Code string }
			_ = json.Unmarshal(env.Event, &e)
			if e.Type != string(agui.EventRunError) || !allowedRefusal(e.Code) {
				fc.a.violate("flood: refused with "+e.Type+" "+e.Code, string(env.Event[:min(len(env.Event), 200)]))
			}
			fc.mu.Lock()
			fc.refusals[e.Code]++
			fc.mu.Unlock()
			if env.RunID == "r1" {
				select {
				case fc.runRefused <- e.Code:
				default:
				}
			}
			continue
		}
		if env.ThreadID != fc.thread || env.RunID != "r1" {
			continue // a duplicate run frame that raced the run's end
		}
		fc.mu.Lock()
		terminal := fc.t.event(env.Seq, env.Event)
		fc.mu.Unlock()
		fc.startOnce.Do(func() { close(fc.started) })
		if terminal {
			fc.endOnce.Do(func() { close(fc.ended) })
		}
	}
}

// check waits a moment for the subscription's copy of the end, then
// checks the run's end as finish does.
func (fc *floodConn) check(ctx context.Context, started time.Time) {
	sleep(ctx, 200*time.Millisecond)
	fc.mu.Lock()
	t := &tail{lastSeq: fc.t.lastSeq, terminals: maps.Clone(fc.t.terminals)}
	fc.mu.Unlock()
	fc.a.finish(ctx, fc.thread, t, started)
}

// slowBody announces a 100 000-byte run request body and sends it a byte a
// second: the bridge must answer it (4xx, connection closed) once its body
// deadline passes.
func (a *abuser) slowBody(ctx context.Context) {
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", a.host)
	if err != nil {
		sleep(ctx, time.Second)
		return
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /agents/streamer HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
		a.host, keyOf(slowpoke))
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err == nil {
			resp.Body.Close()
			answered <- resp
		}
		close(answered)
	}()
	tick := time.NewTicker(a.cut.tick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case resp, ok := <-answered:
			took := time.Since(start)
			switch {
			case !ok:
				a.tally(func(r *abuseReport) { r.SlowBodies.note("closed", took) })
				a.violate("slow body: closed without an answer", took.String())
			case resp.StatusCode < 400 || resp.StatusCode >= 500:
				a.tally(func(r *abuseReport) { r.SlowBodies.note(strconv.Itoa(resp.StatusCode), took) })
				a.violate(fmt.Sprintf("slow body: status %d", resp.StatusCode), took.String())
			case !resp.Close:
				a.tally(func(r *abuseReport) { r.SlowBodies.note(strconv.Itoa(resp.StatusCode), took) })
				a.violate("slow body: the connection stays open", took.String())
			default:
				a.tally(func(r *abuseReport) { r.SlowBodies.note(strconv.Itoa(resp.StatusCode), took) })
				if took > a.cut.body+a.cut.slack {
					a.violate("slow body: answered late", took.String())
				}
			}
			return
		case <-tick.C:
			if time.Since(start) > a.cut.body+a.cut.slack {
				a.tally(func(r *abuseReport) { r.SlowBodies.note("none", time.Since(start)) })
				a.violate("slow body: not cut", time.Since(start).String())
				return
			}
			_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, _ = conn.Write([]byte(" ")) // a refused write: the answer comes
		}
	}
}

// slowHeaders (slowloris) sends a request's headers a byte a second: the
// bridge must close the connection once server.readHeaderTimeout passes
// (net/http closes it, at times with a 408).
func (a *abuser) slowHeaders(ctx context.Context) {
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", a.host)
	if err != nil {
		sleep(ctx, time.Second)
		return
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "GET /agents HTTP/1.1\r\nHost: %s\r\nX-Soak-Slow: ", a.host)
	closed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(conn, 4096))
		answer := "closed"
		if f := strings.Fields(string(b)); len(f) > 1 && strings.HasPrefix(f[0], "HTTP/") {
			answer = f[1]
		}
		closed <- answer
	}()
	tick := time.NewTicker(a.cut.tick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case answer := <-closed:
			took := time.Since(start)
			a.tally(func(r *abuseReport) { r.Slowloris.note(answer, took) })
			if took > a.cut.header+a.cut.slack {
				a.violate("slowloris: cut late", took.String())
			}
			return
		case <-tick.C:
			if time.Since(start) > a.cut.header+a.cut.slack {
				a.tally(func(r *abuseReport) { r.Slowloris.note("none", time.Since(start)) })
				a.violate("slowloris: not cut", time.Since(start).String())
				return
			}
			_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, _ = conn.Write([]byte("a"))
		}
	}
}

// oversizedBody is a 2 MiB run request, twice the soak's body limit.
var oversizedBody = []byte(`{"threadId":"big","runId":"r1","messages":[{"id":"u1","role":"user","content":"` +
	strings.Repeat("a", 2<<20) + `"}]}`)

// oversize posts oversizedBody, announced (Content-Length) on even
// clients' turns and chunked on odd ones, and expects 413.
func (a *abuser) oversize(ctx context.Context, k int) {
	ctx = withKey(ctx, keyOf(slowpoke))
	var body io.Reader = bytes.NewReader(oversizedBody)
	a.mu.Lock()
	chunked := (a.rep.Oversized.Requests+int64(k))%2 == 1
	a.mu.Unlock()
	if chunked {
		body = struct{ io.Reader }{body} // hides the length: chunked
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/agents/streamer", body)
	req.Header.Set("Content-Type", "application/json")
	authorize(req)
	start := time.Now()
	resp, err := a.fast.Do(req)
	took := time.Since(start)
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		// The bridge closes the connection after its 413; a client still
		// writing the body may see that as a reset instead of the answer.
		a.tally(func(r *abuseReport) { r.Oversized.note("reset", took) })
	default:
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		a.tally(func(r *abuseReport) { r.Oversized.note(strconv.Itoa(resp.StatusCode), took) })
		if resp.StatusCode != http.StatusRequestEntityTooLarge && resp.StatusCode != http.StatusTooManyRequests {
			a.violate(fmt.Sprintf("oversized: status %d", resp.StatusCode), fmt.Sprintf("chunked %v", chunked))
		}
	}
	sleep(ctx, time.Second)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
