package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// report is everything one invocation measured. With -json it is printed as
// is; otherwise as text tables.
type report struct {
	Header  header            `json:"header"`
	Targets []*targetResult   `json:"targets,omitempty"`
	Ratios  *ratios           `json:"ratios,omitempty"`
	Skipped map[string]string `json:"skipped,omitempty"` // target → why it was not measured
	Streams *streamsResult    `json:"streams,omitempty"`
}

type header struct {
	Date        string  `json:"date"`
	Command     string  `json:"command"`    // as typed, with the program named bridge-bench
	Executable  string  `json:"executable"` // the binary that ran (a temporary one under go run)
	GoVersion   string  `json:"goVersion"`  // `go version`, which built the bridge
	BenchGo     string  `json:"benchGoVersion"`
	NProc       int     `json:"nproc"`
	CPUModel    string  `json:"cpuModel,omitempty"`
	Kernel      string  `json:"kernel,omitempty"`
	NoFile      uint64  `json:"rlimitNofile"` // RLIMIT_NOFILE of the bench and its children
	Mode        string  `json:"mode"`
	Runs        int     `json:"runs,omitempty"`
	Chunks      int     `json:"chunks,omitempty"`
	Concurrency int     `json:"concurrency,omitempty"`
	Warmup      int     `json:"warmup,omitempty"`
	TTFERuns    int     `json:"ttfeRuns,omitempty"`
	Store       string  `json:"store"`
	Agent       string  `json:"agentHandler"` // the Go agent's request handler
	AgentImpl   string  `json:"agent"`        // go or js
	Reader      string  `json:"reader,omitempty"`
	Shape       string  `json:"shape,omitempty"`
	PaceMs      float64 `json:"paceMs"`
}

// usage is one process's share of a phase.
type usage struct {
	CPUSeconds        float64 `json:"cpuSeconds"` // user + sys
	CPUUserSeconds    float64 `json:"cpuUserSeconds"`
	CPUSysSeconds     float64 `json:"cpuSysSeconds"`
	CPUMicrosPerChunk float64 `json:"cpuMicrosPerChunk"`
	PeakRSSKiB        int64   `json:"peakRSSKiB,omitempty"`
}

// targetResult is one target's phase of the chunks mode.
type targetResult struct {
	Name          string `json:"name"`          // relay, limit, bridge, peer
	Process       string `json:"process"`       // the process whose CPU is measured
	ReaderProcess string `json:"readerProcess"` // what read its stream
	// The throughput phase: -runs runs at -concurrency.
	Runs              int     `json:"runs"`
	Failed            int     `json:"failed"`
	ErrorSample       string  `json:"errorSample,omitempty"` // the first failure of the phase or the TTFE runs
	WarmupFailed      int     `json:"warmupFailed,omitempty"`
	WarmupError       string  `json:"warmupError,omitempty"`
	A2AChunks         int64   `json:"a2aChunks"`         // runs × chunks the agent sent
	ChunkEvents       int64   `json:"chunkEvents"`       // chunks the events carried (a text delta the bridge merged counts each of its chunks)
	Events            int64   `json:"events"`            // every event of every run
	EventsPerRun      float64 `json:"eventsPerRun"`      // all events, per run
	ChunkEventsPerA2A float64 `json:"chunkEventsPerA2A"` // ChunkEvents per A2A chunk: 1 unless chunks were lost or repeated
	WallSeconds       float64 `json:"wallSeconds"`
	ChunksPerSecond   float64 `json:"chunksPerSecond"`
	usage                     // the translating process: CPU over the phase, peak RSS over its life
	// The target process's I/O syscalls over the measured phase
	// (/proc/PID/io syscr, syscw), in all and per A2A chunk.
	ReadSyscalls          int64   `json:"readSyscalls"`
	WriteSyscalls         int64   `json:"writeSyscalls"`
	ReadSyscallsPerChunk  float64 `json:"readSyscallsPerChunk"`
	WriteSyscallsPerChunk float64 `json:"writeSyscallsPerChunk"`
	// Per chunk of the measured phase: from the agent's stamp (the chunk
	// handed to its transport) to the reader having the event.
	LatencyP50Ms   float64 `json:"latencyP50Ms"`
	LatencyP99Ms   float64 `json:"latencyP99Ms"`
	LatencyMaxMs   float64 `json:"latencyMaxMs"`
	LatencySamples int     `json:"latencySamples"`
	// Time to first event, with one run in flight.
	TTFEMedianMs float64 `json:"ttfeMedianMs"`
	TTFEMinMs    float64 `json:"ttfeMinMs"`
	TTFEMaxMs    float64 `json:"ttfeMaxMs"`
	TTFESamples  int     `json:"ttfeSamples"`
	TTFEFailed   int     `json:"ttfeFailed,omitempty"`
	Agent        usage   `json:"agent"` // the A2A agent during the same phase, for context
	// The agent's syscalls per chunk: about one write per chunk when it
	// flushes every chunk as it makes it.
	AgentReadSyscallsPerChunk  float64 `json:"agentReadSyscallsPerChunk"`
	AgentWriteSyscallsPerChunk float64 `json:"agentWriteSyscallsPerChunk"`
	// Connections to the agent that carried A2A requests in the measured
	// phase: about -concurrency when the translator reuses them, about
	// -runs when it opens one per run.
	AgentConnections int64  `json:"agentConnections"`
	Driver           usage  `json:"driver"`           // the bench itself
	Reader           *usage `json:"reader,omitempty"` // the reader (the bench or the node reader); none for the limit
}

type ratios struct {
	// CPU per chunk: how many times the relay's cost the bridge pays.
	BridgeOverRelay float64 `json:"bridgeOverRelayCPU,omitempty"`
	// Latency p99: how many times the relay's the bridge adds.
	BridgeOverRelayLatencyP99 float64 `json:"bridgeOverRelayLatencyP99,omitempty"`
	// CPU per chunk: how many times the limit's cost the bridge pays.
	BridgeOverLimit float64 `json:"bridgeOverLimitCPU,omitempty"`
	// CPU per chunk: how many times the bridge's cost the peer pays.
	PeerOverBridge float64 `json:"peerOverBridgeCPU,omitempty"`
}

// streamsResult is the streams mode: many slow streams open at once.
type streamsResult struct {
	Requested            int               `json:"requested"`
	Opened               int               `json:"opened"`     // HTTP 200
	Started              int               `json:"started"`    // RUN_STARTED received
	FirstChunk           int               `json:"firstChunk"` // the agent's first chunk reached the client
	Finished             int               `json:"finished"`   // ended with RUN_FINISHED
	NonOK                map[string]int    `json:"nonOK,omitempty"`
	RunErrors            map[string]int    `json:"runErrors,omitempty"`
	TransportErrors      int               `json:"transportErrors"`
	Unfinished           int               `json:"unfinished"` // opened, but no RUN_FINISHED
	ErrorSamples         []string          `json:"errorSamples,omitempty"`
	RampSeconds          float64           `json:"rampSeconds"` // first request to the plateau
	RampBridgeCPUSeconds float64           `json:"rampBridgeCPUSeconds"`
	Plateau              int               `json:"plateau"` // streams open at once at the plateau
	RSSBaselineKiB       int64             `json:"rssBaselineKiB"`
	RSSPlateauKiB        int64             `json:"rssPlateauKiB"`
	RSSAfterKiB          int64             `json:"rssAfterKiB"`
	PeakRSSKiB           int64             `json:"peakRSSKiB"`
	RSSPerStreamKiB      float64           `json:"rssPerStreamKiB"` // (plateau − baseline) / plateau streams
	Goroutines           *counts           `json:"goroutines,omitempty"`
	GoroutinesNote       string            `json:"goroutinesNote,omitempty"`
	Threads              counts            `json:"threads"`
	OpenFilesPlateau     int               `json:"openFilesPlateau"`
	BridgeCPUSeconds     float64           `json:"bridgeCPUSeconds"`
	Agent                map[string]int64  `json:"agent"` // the agent's RSS and peak RSS, for context
	Settings             map[string]string `json:"settings"`
	Note                 string            `json:"note,omitempty"`
}

type counts struct {
	Baseline int64 `json:"baseline"`
	Plateau  int64 `json:"plateau"`
	After    int64 `json:"after"`
}

func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *report) writeText(w io.Writer) error {
	h := r.Header
	fmt.Fprintf(w, "bridge-bench  %s\n", h.Date)
	fmt.Fprintf(w, "command:  %s\n", h.Command)
	fmt.Fprintf(w, "machine:  nproc=%d  %s  %s\n", h.NProc, h.CPUModel, h.Kernel)
	fmt.Fprintf(w, "go:       %s (bench built with %s)\n", h.GoVersion, h.BenchGo)
	fmt.Fprintf(w, "nofile:   %d   store: %s   agent: %s", h.NoFile, h.Store, h.AgentImpl)
	if h.AgentImpl == "go" {
		fmt.Fprintf(w, " (handler %s)", h.Agent)
	}
	fmt.Fprintln(w)
	switch h.Mode {
	case "chunks":
		fmt.Fprintf(w, "load:     shape %s: %d runs × %d chunks, concurrency %d, pace %s; warm-up %d runs, TTFE over %d sequential runs; reader %s\n\n",
			h.Shape, h.Runs, h.Chunks, h.Concurrency, paceText(h.PaceMs), h.Warmup, h.TTFERuns, h.Reader)
		r.writeTargets(w)
	case "streams":
		fmt.Fprintln(w)
		r.Streams.writeText(w)
	}
	return nil
}

func (r *report) writeTargets(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tCPU µs/chunk\tread/write syscalls/chunk\tchunks/s\tpeak RSS MiB\tlatency p50/p99 ms\tTTFE median ms\tchunk events/A2A chunk\tevents/run\tfailed\tagent CPU µs/chunk\treader CPU µs/chunk\t")
	for _, t := range r.Targets {
		reader := "-"
		if t.Reader != nil {
			reader = fmt.Sprintf("%.2f", t.Reader.CPUMicrosPerChunk)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f / %.2f\t%.0f\t%.1f\t%.2f / %.2f\t%.2f\t%.2f\t%.1f\t%d/%d\t%.2f\t%s\t\n",
			t.Name, t.CPUMicrosPerChunk, t.ReadSyscallsPerChunk, t.WriteSyscallsPerChunk, t.ChunksPerSecond, float64(t.PeakRSSKiB)/1024,
			t.LatencyP50Ms, t.LatencyP99Ms, t.TTFEMedianMs,
			t.ChunkEventsPerA2A, t.EventsPerRun, t.Failed, t.Runs, t.Agent.CPUMicrosPerChunk, reader)
	}
	tw.Flush()
	for name, why := range r.Skipped {
		fmt.Fprintf(w, "%s: skipped (%s)\n", name, why)
	}
	if r.Ratios != nil {
		fmt.Fprintln(w)
		if r.Ratios.BridgeOverRelay > 0 {
			fmt.Fprintf(w, "bridge/relay CPU per chunk: %.2f×", r.Ratios.BridgeOverRelay)
			if r.Ratios.BridgeOverRelayLatencyP99 > 0 {
				fmt.Fprintf(w, "   latency p99: %.2f×", r.Ratios.BridgeOverRelayLatencyP99)
			}
			fmt.Fprintln(w)
		}
		if r.Ratios.BridgeOverLimit > 0 {
			fmt.Fprintf(w, "bridge/limit CPU per chunk: %.2f×\n", r.Ratios.BridgeOverLimit)
		}
		if r.Ratios.PeerOverBridge > 0 {
			fmt.Fprintf(w, "peer/bridge  CPU per chunk: %.2f×\n", r.Ratios.PeerOverBridge)
		}
	}
	fmt.Fprintln(w)
	for _, t := range r.Targets {
		fmt.Fprintf(w, "%s: %s\n  %.2f s CPU (%.2f user + %.2f sys) over %.2f s wall for %d A2A chunks; TTFE min %.2f / max %.2f ms over %d runs",
			t.Name, t.Process, t.CPUSeconds, t.CPUUserSeconds, t.CPUSysSeconds, t.WallSeconds, t.A2AChunks, t.TTFEMinMs, t.TTFEMaxMs, t.TTFESamples)
		if t.TTFEFailed > 0 {
			fmt.Fprintf(w, " (%d failed)", t.TTFEFailed)
		}
		fmt.Fprintf(w, "; %d connections to the agent for %d runs\n", t.AgentConnections, t.Runs)
		fmt.Fprintf(w, "  read by %s; %d read / %d write syscalls; latency max %.2f ms over %d chunks; agent %.2f read / %.2f write syscalls per chunk\n",
			t.ReaderProcess, t.ReadSyscalls, t.WriteSyscalls, t.LatencyMaxMs, t.LatencySamples, t.AgentReadSyscallsPerChunk, t.AgentWriteSyscallsPerChunk)
		if t.ErrorSample != "" {
			fmt.Fprintf(w, "  first error: %s\n", t.ErrorSample)
		}
		if t.WarmupFailed > 0 {
			fmt.Fprintf(w, "  %d warm-up runs failed, first: %s\n", t.WarmupFailed, t.WarmupError)
		}
	}
}

func (s *streamsResult) writeText(w io.Writer) {
	var settings []string
	for _, k := range []string{"store", "interval", "hold", "openParallel", "rampTimeout", "stallTimeout"} {
		if v, ok := s.Settings[k]; ok {
			settings = append(settings, k+"="+v)
		}
	}
	fmt.Fprintf(w, "streams:  %d requested (%s)\n", s.Requested, strings.Join(settings, " "))
	fmt.Fprintf(w, "  opened (200) %d, RUN_STARTED %d, first chunk %d, RUN_FINISHED %d\n", s.Opened, s.Started, s.FirstChunk, s.Finished)
	fmt.Fprintf(w, "  plateau: %d streams open at once, reached in %.1f s (bridge CPU meanwhile %.1f s)\n", s.Plateau, s.RampSeconds, s.RampBridgeCPUSeconds)
	fmt.Fprintf(w, "  bridge RSS: baseline %.1f MiB, plateau %.1f MiB, after %.1f MiB, peak %.1f MiB → %.1f KiB per stream\n",
		float64(s.RSSBaselineKiB)/1024, float64(s.RSSPlateauKiB)/1024, float64(s.RSSAfterKiB)/1024, float64(s.PeakRSSKiB)/1024, s.RSSPerStreamKiB)
	if s.Goroutines != nil {
		fmt.Fprintf(w, "  goroutines: baseline %d, plateau %d, after %d\n", s.Goroutines.Baseline, s.Goroutines.Plateau, s.Goroutines.After)
	} else {
		fmt.Fprintf(w, "  goroutines: unavailable (%s)\n", s.GoroutinesNote)
	}
	fmt.Fprintf(w, "  OS threads: baseline %d, plateau %d, after %d; open files at plateau %d\n",
		s.Threads.Baseline, s.Threads.Plateau, s.Threads.After, s.OpenFilesPlateau)
	fmt.Fprintf(w, "  bridge CPU over the whole mode: %.2f s; agent RSS peak %.1f MiB\n", s.BridgeCPUSeconds, float64(s.Agent["peakRSSKiB"])/1024)
	fmt.Fprintf(w, "  errors: non-200 %v, transport %d, RUN_ERROR %v, opened but not finished %d\n", s.NonOK, s.TransportErrors, s.RunErrors, s.Unfinished)
	for _, e := range s.ErrorSamples {
		fmt.Fprintf(w, "    e.g. %s\n", e)
	}
	if s.Note != "" {
		fmt.Fprintf(w, "  note: %s\n", s.Note)
	}
}

func paceText(paceMs float64) string {
	if paceMs == 0 {
		return "none (back to back)"
	}
	return fmt.Sprintf("%g ms", paceMs)
}
