package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// streamsMode opens -streams concurrent runs to the bridge in front of a
// slow agent, and reads what each open stream costs the bridge: RSS,
// goroutines (when the bridge exports them) or OS threads, open files.
//
// The agent sends its first chunk at once, then one every -interval, and
// finishes a task only after -hold and after the bench releases it (POST
// /release on the agent), which the bench does once every stream has either
// received its first chunk or failed, or nothing has moved for
// -stall-timeout. So the plateau holds every stream that could be opened,
// however long opening them took.
func (b *bench) streamsMode(ctx context.Context) (*streamsResult, error) {
	cfg := b.cfg
	res := &streamsResult{
		Requested: cfg.streams,
		Settings: map[string]string{
			"store":        cfg.store,
			"interval":     cfg.interval.String(),
			"hold":         cfg.hold.String(),
			"openParallel": strconv.Itoa(cfg.openParallel),
			"rampTimeout":  cfg.rampTimeout.String(),
			"stallTimeout": cfg.stallTimeout.String(),
		},
	}
	fmt.Fprintf(b.progress, "== streams: %d runs through the bridge, agent chunk every %s, tasks held ≥ %s\n", cfg.streams, cfg.interval, cfg.hold)
	agent, agentURL, err := b.startAgent(ctx, "-chunks", "1", "-interval", cfg.interval.String(),
		"-hold", cfg.hold.String(), "-release")
	if err != nil {
		return nil, err
	}
	defer agent.stop()
	bridge, base, err := b.startBridge(ctx, agentURL, "streams")
	if err != nil {
		return nil, err
	}
	defer bridge.stop()

	pid := bridge.pid()
	cpuBefore, err := cpuTime(pid)
	if err != nil {
		return nil, err
	}
	baseline, err := readStatus(pid)
	if err != nil {
		return nil, err
	}
	goroutinesBaseline, gerr := goroutines(ctx, base)
	if gerr != nil {
		res.GoroutinesNote = gerr.Error()
	}

	tr := newStreamTracker(cfg.streams)
	client := streamsClient()
	defer client.CloseIdleConnections()
	streamCtx, cancelStreams := context.WithCancel(ctx)
	defer cancelStreams()
	open := make(chan struct{}, cfg.openParallel)
	var streams sync.WaitGroup
	start := time.Now()
	for range cfg.streams {
		streams.Go(func() { tr.stream(streamCtx, client, base+"agents/bench", open) })
	}
	// Every return below waits for the streams first: they are this
	// function's goroutines.
	allEnded := make(chan struct{})
	go func() {
		streams.Wait()
		close(allEnded)
	}()
	defer func() {
		cancelStreams()
		<-allEnded
	}()

	cut, err := b.waitPlateau(ctx, tr)
	if err != nil {
		return nil, err
	}
	res.RampSeconds = time.Since(start).Seconds()
	if cpuRamp, err := cpuTime(pid); err == nil {
		res.RampBridgeCPUSeconds = cpuRamp.sub(cpuBefore).total().Seconds()
	}
	plateau, err := readStatus(pid)
	if err != nil {
		return nil, err
	}
	res.Plateau = tr.openNow()
	res.OpenFilesPlateau, _ = openFiles(pid)
	goroutinesPlateau, _ := goroutines(ctx, base)
	fmt.Fprintf(b.progress, "plateau: %d streams open; releasing the agent's tasks\n", res.Plateau)

	if err := release(ctx, agentURL); err != nil {
		return nil, err
	}
	endTimer := time.NewTimer(cfg.endTimeout)
	defer endTimer.Stop()
	select {
	case <-allEnded:
	case <-endTimer.C:
		fmt.Fprintf(b.progress, "streams still open after %s; cutting them\n", cfg.endTimeout)
		cancelStreams()
		<-allEnded
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The bridge ends its side of a run after the client has read the last
	// event; poll until its goroutines (or threads) have had their chance
	// to go, bounded, rather than guess a sleep.
	after, goroutinesAfter := b.settleAfter(ctx, pid, base, goroutinesBaseline)
	cpuAfter, err := cpuTime(pid)
	if err != nil {
		return nil, err
	}

	tr.fill(res)
	res.RSSBaselineKiB, res.RSSPlateauKiB, res.RSSAfterKiB = baseline.RSSKiB, plateau.RSSKiB, after.RSSKiB
	res.PeakRSSKiB = max(after.PeakRSSKiB, plateau.PeakRSSKiB)
	if res.Plateau > 0 {
		res.RSSPerStreamKiB = float64(plateau.RSSKiB-baseline.RSSKiB) / float64(res.Plateau)
	}
	res.Threads = counts{Baseline: baseline.Threads, Plateau: plateau.Threads, After: after.Threads}
	if gerr == nil {
		res.Goroutines = &counts{Baseline: goroutinesBaseline, Plateau: goroutinesPlateau, After: goroutinesAfter}
	}
	res.BridgeCPUSeconds = cpuAfter.sub(cpuBefore).total().Seconds()
	if st, err := readStatus(agent.pid()); err == nil {
		res.Agent = map[string]int64{"rssKiB": st.RSSKiB, "peakRSSKiB": st.PeakRSSKiB, "threads": st.Threads}
	}
	res.Note = b.explainShortfall(res, pid, cut)
	return res, nil
}

// waitPlateau waits until every stream has received its first chunk or
// failed. It gives up after -ramp-timeout, or when nothing has changed for
// -stall-timeout, and then says which ("" when every stream settled),
// printing progress meanwhile.
func (b *bench) waitPlateau(ctx context.Context, tr *streamTracker) (cut string, err error) {
	cfg := b.cfg
	ramp := time.NewTimer(cfg.rampTimeout)
	defer ramp.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastChange, lastPrint := -1, time.Now(), time.Time{}
	for {
		select {
		case <-tr.settledAll:
			fmt.Fprintf(b.progress, "%s\n", tr.progress())
			return "", nil
		case <-ramp.C:
			fmt.Fprintf(b.progress, "ramp timeout (%s): %s\n", cfg.rampTimeout, tr.progress())
			return fmt.Sprintf("the streams were still opening when -ramp-timeout (%s) ran out", cfg.rampTimeout), nil
		case <-ctx.Done():
			return "", ctx.Err()
		case now := <-tick.C:
			if n := tr.settledCount(); n != last {
				last, lastChange = n, now
			} else if now.Sub(lastChange) >= cfg.stallTimeout {
				fmt.Fprintf(b.progress, "no progress for %s: %s\n", cfg.stallTimeout, tr.progress())
				return fmt.Sprintf("no stream opened or failed for %s (-stall-timeout); requests the bridge could not accept wait in the listen backlog, since net/http retries accept after EMFILE", cfg.stallTimeout), nil
			}
			if now.Sub(lastPrint) >= 5*time.Second {
				fmt.Fprintf(b.progress, "%s\n", tr.progress())
				lastPrint = now
			}
		}
	}
}

// settleAfter reads the bridge once its runs have wound down: it polls
// (bounded to 10 s) until the goroutine count, or else the thread count,
// stops falling.
func (b *bench) settleAfter(ctx context.Context, pid int, base string, goroutinesBaseline int64) (procStatus, int64) {
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var (
		st   procStatus
		g    int64
		prev int64 = -1
	)
	for {
		st, _ = readStatus(pid)
		var err error
		if g, err = goroutines(ctx, base); err != nil {
			g = -1
		}
		level := g
		if level < 0 {
			level = st.Threads
		}
		if level == prev || (g >= 0 && g <= goroutinesBaseline) {
			return st, g
		}
		prev = level
		select {
		case <-tick.C:
		case <-deadline.C:
			return st, g
		case <-ctx.Done():
			return st, g
		}
	}
}

// explainShortfall says why fewer streams than requested were open at once,
// from what the bench can see.
func (b *bench) explainShortfall(res *streamsResult, pid int, cut string) string {
	if res.Plateau >= res.Requested {
		return ""
	}
	var why []string
	limit, err := openFilesLimit(pid)
	if err == nil && limit > 0 && int64(res.OpenFilesPlateau) >= limit-16 {
		why = append(why, fmt.Sprintf("the bridge had %d files open at the plateau against its RLIMIT_NOFILE of %d: each stream holds two descriptors there (the client's connection and the one to the agent), so it cannot hold more than about %d",
			res.OpenFilesPlateau, limit, limit/2))
	}
	if cut != "" {
		why = append(why, cut)
	}
	if res.RampSeconds > 0 {
		why = append(why, fmt.Sprintf("the bridge used %.1f s of CPU in the %.1f s of the ramp (%.2f of %d cores)",
			res.RampBridgeCPUSeconds, res.RampSeconds, res.RampBridgeCPUSeconds/res.RampSeconds, runtime.NumCPU()))
	}
	if len(res.ErrorSamples) > 0 {
		why = append(why, "errors seen: "+strings.Join(res.ErrorSamples, " | "))
	}
	if len(why) == 0 {
		why = append(why, "no cause visible to the bench; see the bridge's log with -v")
	}
	return fmt.Sprintf("only %d of %d streams were open at once: %s", res.Plateau, res.Requested, strings.Join(why, "; "))
}

// streamsClient is the driver's client for many long streams: a connection
// per stream, none shared, no limit per host, no overall timeout. Dial
// timeout is generous because thousands of SYNs at once can overflow the
// listen backlog and be retransmitted.
func streamsClient() *http.Client {
	dialer := &net.Dialer{Timeout: time.Minute, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext:         dialer.DialContext,
		MaxConnsPerHost:     0,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     10 * time.Second,
		DisableCompression:  true,
	}}
}

// release ends the slow agent's hold on its tasks.
func release(ctx context.Context, agentURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, agentURL+"release", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("release the agent's tasks: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("release the agent's tasks: HTTP %d", resp.StatusCode)
	}
	return nil
}

// goroutines reads the go_goroutines gauge from the bridge's GET /metrics
// (Prometheus text format). The error says why it is not available.
func goroutines(ctx context.Context, base string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics answered HTTP %d: the bridge exports no metrics; OS threads from /proc are shown instead", resp.StatusCode)
	}
	return parseGoroutines(resp.Body)
}

// parseGoroutines finds the go_goroutines sample in a Prometheus text
// exposition.
func parseGoroutines(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		rest, ok := bytes.CutPrefix(line, []byte("go_goroutines"))
		if !ok || len(rest) == 0 || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		if rest[0] == '{' { // labels
			if i := bytes.IndexByte(rest, '}'); i >= 0 {
				rest = rest[i+1:]
			}
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(string(fields[0]), 64)
		if err != nil {
			return 0, fmt.Errorf("go_goroutines: %w", err)
		}
		return int64(v), nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("GET /metrics has no go_goroutines gauge")
}

// streamTracker follows every stream of the streams mode.
type streamTracker struct {
	requested  int
	settledAll chan struct{} // closed when every stream has settled

	mu           sync.Mutex
	opened       int // HTTP 200
	started      int // RUN_STARTED seen
	firstChunk   int // first chunk seen
	finished     int // ended with RUN_FINISHED
	endedOpen    int // ended after the first chunk (any way): no longer part of the plateau
	settled      int // first chunk seen, or ended without one
	nonOK        map[string]int
	runErrors    map[string]int
	transportErr int
	unfinished   int
	samples      []string
}

func newStreamTracker(n int) *streamTracker {
	return &streamTracker{requested: n, settledAll: make(chan struct{}), nonOK: map[string]int{}, runErrors: map[string]int{}}
}

// settle counts one stream as settled; the caller holds t.mu.
func (t *streamTracker) settleLocked() {
	t.settled++
	if t.settled == t.requested {
		close(t.settledAll)
	}
}

func (t *streamTracker) sample(err error) {
	msg := err.Error()
	if len(t.samples) < 5 && !slices.Contains(t.samples, msg) {
		t.samples = append(t.samples, msg)
	}
}

// stream runs one stream to its end. open bounds how many requests are
// being opened at once: a slot is held from the request until the first
// event.
func (t *streamTracker) stream(ctx context.Context, client *http.Client, url string, open chan struct{}) {
	select {
	case open <- struct{}{}:
	case <-ctx.Done():
		t.mu.Lock()
		t.transportErr++
		t.settleLocked()
		t.mu.Unlock()
		return
	}
	holding := true
	freeSlot := func() {
		if holding {
			<-open
			holding = false
		}
	}
	defer freeSlot()

	resp, err := postRun(ctx, client, url, runInput(), false)
	if err != nil {
		t.mu.Lock()
		var status *httpStatusError
		if errors.As(err, &status) {
			t.nonOK[strconv.Itoa(status.code)]++
		} else {
			t.transportErr++
		}
		t.sample(err)
		t.settleLocked()
		t.mu.Unlock()
		return
	}
	defer resp.Body.Close()
	t.mu.Lock()
	t.opened++
	t.mu.Unlock()

	var (
		last     eventClass
		gotChunk bool
		runError string
		readErr  error
	)
	events := newSSEReader(resp.Body, 2<<10) // ten thousand of these: keep them small
	for {
		data, err := events.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		freeSlot()
		class, desc, err := classifyBridge(data)
		if err != nil {
			readErr = err
			break
		}
		switch class {
		case classStarted:
			t.mu.Lock()
			t.started++
			t.mu.Unlock()
		case classChunk:
			if !gotChunk {
				gotChunk = true
				t.mu.Lock()
				t.firstChunk++
				t.settleLocked()
				t.mu.Unlock()
			}
		case classError:
			runError = desc
		}
		last = class
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if gotChunk {
		t.endedOpen++
	} else {
		t.settleLocked()
	}
	switch {
	case last == classFinished && runError == "" && readErr == nil:
		t.finished++
		return
	case runError != "":
		code, _, _ := strings.Cut(strings.TrimPrefix(runError, "RUN_ERROR "), ":")
		t.runErrors[code]++
		t.sample(errors.New(runError))
	case readErr != nil:
		t.sample(readErr)
	default:
		t.sample(errors.New("stream ended without RUN_FINISHED"))
	}
	t.unfinished++
}

func (t *streamTracker) settledCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.settled
}

// openNow is how many streams have their first chunk and are still open.
func (t *streamTracker) openNow() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.firstChunk - t.endedOpen
}

func (t *streamTracker) progress() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	failed := t.transportErr
	for _, n := range t.nonOK {
		failed += n
	}
	return fmt.Sprintf("opened %d, RUN_STARTED %d, first chunk %d, open now %d, failed to open %d (of %d)",
		t.opened, t.started, t.firstChunk, t.firstChunk-t.endedOpen, failed, t.requested)
}

func (t *streamTracker) fill(res *streamsResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	res.Opened, res.Started, res.FirstChunk, res.Finished = t.opened, t.started, t.firstChunk, t.finished
	res.NonOK, res.RunErrors = maps.Clone(t.nonOK), maps.Clone(t.runErrors)
	res.TransportErrors, res.Unfinished = t.transportErr, t.unfinished
	res.ErrorSamples = slices.Clone(t.samples)
}
