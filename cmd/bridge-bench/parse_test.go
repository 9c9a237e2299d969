package main

import (
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSSEReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stream string
		want   []string
	}{
		{"one event", "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"no space after colon", "data:x\n\n", []string{"x"}},
		{"only one leading space is dropped", "data:  x\n\n", []string{" x"}},
		{"data lines are joined with LF", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"comments and other fields are skipped", ": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: x\n\n", []string{"x"}},
		{"an event without data is no event", "event: ping\n\ndata: x\n\n", []string{"x"}},
		{"CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"lone CR line ends", "data: a\r\rdata: b\r\r", []string{"a", "b"}},
		{"an unterminated last event is dropped", "data: a\n\ndata: b\n", []string{"a"}},
		{"an unterminated last line is dropped", "data: a\n\ndata: b", []string{"a"}},
		{"empty data line", "data\n\n", []string{""}},
		{"blank lines between events", "\n\ndata: a\n\n\n\ndata: b\n\n", []string{"a", "b"}},
		{"empty stream", "", nil},
	}
	for _, tt := range tests {
		for _, reader := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{
			{"whole", func(r io.Reader) io.Reader { return r }},
			// One byte per read: a CR at the end of a read must wait for
			// the next byte to know whether it is a CRLF.
			{"byte by byte", iotest.OneByteReader},
		} {
			t.Run(tt.name+"/"+reader.name, func(t *testing.T) {
				t.Parallel()
				r := newSSEReader(reader.wrap(strings.NewReader(tt.stream)), 16)
				var got []string
				for {
					data, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("Next: %v", err)
					}
					got = append(got, string(data))
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// A line longer than the reader's starting buffer still comes through whole.
func TestSSEReaderLongLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100_000)
	r := newSSEReader(strings.NewReader("data: "+long+"\n\n"), 16)
	data, err := r.Next()
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	if string(data) != long {
		t.Errorf("got %d bytes, want %d", len(data), len(long))
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		classify classifier
		data     string
		want     eventClass
		desc     string
	}{
		{"bridge start", classifyBridge, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, classStarted, ""},
		{"bridge chunk", classifyBridge, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"w1 "}`, classChunk, ""},
		{"bridge step", classifyBridge, `{"type":"STEP_STARTED","stepName":"a2a:working"}`, classOther, ""},
		{"bridge finish", classifyBridge, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`, classFinished, ""},
		{"bridge error", classifyBridge, `{"type":"RUN_ERROR","code":"a2a_failed","message":"quota"}`, classError, "RUN_ERROR a2a_failed: quota"},
		{"bridge ignores RAW", classifyBridge, `{"type":"RAW","event":{"kind":"artifact-update"}}`, classOther, ""},
		{"peer artifact", classifyPeer, `{"type":"RAW","event":{"kind":"artifact-update","append":true},"source":"a2a"}`, classChunk, ""},
		{"peer task", classifyPeer, `{"type":"RAW","event":{"kind":"task"},"source":"a2a"}`, classOther, ""},
		{"peer text chunk", classifyPeer, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"x"}`, classChunk, ""},
		{"peer finish", classifyPeer, `{"type":"RUN_FINISHED"}`, classFinished, ""},
		{"a2a task", classifyA2A, `{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_SUBMITTED"}}}}`, classOther, ""},
		{"a2a working", classifyA2A, `{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"status":{"state":"TASK_STATE_WORKING"}}}}`, classOther, ""},
		{"a2a chunk", classifyA2A, `{"jsonrpc":"2.0","id":1,"result":{"artifactUpdate":{"artifact":{"parts":[{"text":"w0@1 "}]}}}}`, classChunk, ""},
		{"a2a completed", classifyA2A, `{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"status":{"state":"TASK_STATE_COMPLETED"}}}}`, classFinished, ""},
		{"a2a failed", classifyA2A, `{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"status":{"state":"TASK_STATE_FAILED"}}}}`, classOther, ""},
		{"a2a error", classifyA2A, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}`, classError, "JSON-RPC error -32601: no such method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, desc, err := tt.classify([]byte(tt.data))
			if err != nil {
				t.Fatalf("classify: %v", err)
			}
			if got != tt.want || desc != tt.desc {
				t.Errorf("classify(%s) = %v, %q; want %v, %q", tt.data, got, desc, tt.want, tt.desc)
			}
		})
	}
	if _, _, err := classifyBridge([]byte("not json")); err == nil {
		t.Error("classify(not json) did not fail")
	}
	if _, _, err := classifyA2A([]byte("not json")); err == nil {
		t.Error("classifyA2A(not json) did not fail")
	}
}

func TestChunkStamp(t *testing.T) {
	t.Parallel()
	at := time.UnixMicro(1796351071549847)
	if got := stampChunk("w12 ", at); got != "w12@1796351071549847 " {
		t.Errorf("stampChunk = %q", got)
	}
	tests := []struct {
		data string
		want int64
		ok   bool
	}{
		{"w12@1796351071549847 ", 1796351071549847, true},
		{`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m@x","delta":"w0@42 "}`, 42, true}, // an '@' elsewhere first
		{`{"parts":[{"text":"w499@1796351071549999 ","mediaType":"text/plain"}]}`, 1796351071549999, true},
		{"w12 ", 0, false},
		{"x12@5 ", 0, false}, // not w<digits>
		{"w@5 ", 0, false},   // no index
		{"w1@ ", 0, false},   // no time
		{"@5 w", 0, false},   // '@' at the start
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := chunkStamp([]byte(tt.data))
		if got != tt.want || ok != tt.ok {
			t.Errorf("chunkStamp(%q) = %d, %v; want %d, %v", tt.data, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseIO(t *testing.T) {
	t.Parallel()
	const proc = "rchar: 1\nwchar: 2\nsyscr: 3417\nsyscw: 1210\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"
	c, err := parseIO([]byte(proc))
	if err != nil || c.syscr != 3417 || c.syscw != 1210 {
		t.Errorf("parseIO = %+v, %v; want syscr 3417, syscw 1210", c, err)
	}
	for _, bad := range []string{"", "syscr: 1\n", "syscr: x\nsyscw: 1\n"} {
		if _, err := parseIO([]byte(bad)); err == nil {
			t.Errorf("parseIO(%q) did not fail", bad)
		}
	}
	if _, err := readIO(os.Getpid()); err != nil {
		t.Errorf("readIO(self): %v", err)
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	xs := []int64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tt := range []struct {
		p    float64
		want int64
	}{{50, 5}, {99, 10}, {100, 10}, {10, 1}, {1, 1}} {
		if got := percentile(xs, tt.p); got != tt.want {
			t.Errorf("percentile(%v) = %d, want %d", tt.p, got, tt.want)
		}
	}
	if xs[0] != 5 {
		t.Error("percentile sorted its input")
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile(nil) = %d", got)
	}
}

func TestParseStatCPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		stat         string
		utime, stime uint64
		wantErr      bool
	}{
		{
			name:  "plain",
			stat:  "4242 (bridge) S 1 4242 4242 0 -1 4194560 1234 0 0 0 1500 250 0 0 20 0 9 0 12345 1234567 890 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
			utime: 1500, stime: 250,
		},
		{
			// The command name may hold spaces and parentheses; fields
			// count from the last ')'.
			name:  "odd command name",
			stat:  "7 (node (x) y) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1 1",
			utime: 3, stime: 4,
		},
		{name: "truncated", stat: "7 (x) R 1 7 7 0", wantErr: true},
		{name: "no command", stat: "7 x R", wantErr: true},
		{name: "not a number", stat: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 a 4 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			utime, stime, err := parseStatCPU([]byte(tt.stat))
			if tt.wantErr {
				if err == nil {
					t.Errorf("parseStatCPU = %d, %d; want an error", utime, stime)
				}
				return
			}
			if err != nil || utime != tt.utime || stime != tt.stime {
				t.Errorf("parseStatCPU = %d, %d, %v; want %d, %d", utime, stime, err, tt.utime, tt.stime)
			}
		})
	}
	if got := ticks(150); got != 1500*time.Millisecond {
		t.Errorf("ticks(150) = %v, want 1.5s", got)
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	status := "Name:\tbridge\nState:\tS (sleeping)\nVmPeak:\t 1300000 kB\nVmHWM:\t   45000 kB\nVmRSS:\t   40000 kB\nThreads:\t9\nSigQ:\t0/96362\n"
	got, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatalf("parseStatus: %v", err)
	}
	if want := (procStatus{PeakRSSKiB: 45000, RSSKiB: 40000, Threads: 9}); got != want {
		t.Errorf("parseStatus = %+v, want %+v", got, want)
	}
	// A zombie has no memory lines.
	if _, err := parseStatus([]byte("Name:\tbridge\nState:\tZ (zombie)\nThreads:\t1\n")); err == nil {
		t.Error("parseStatus of a zombie did not fail")
	}
}

// The bench reads its own process the way it reads its children.
func TestProcSelf(t *testing.T) {
	t.Parallel()
	st, err := readStatus(os.Getpid())
	if err != nil {
		t.Fatalf("readStatus(self): %v", err)
	}
	if st.PeakRSSKiB <= 0 || st.RSSKiB <= 0 || st.Threads <= 0 {
		t.Errorf("readStatus(self) = %+v, want positive values", st)
	}
	if _, err := cpuTime(os.Getpid()); err != nil {
		t.Errorf("cpuTime(self): %v", err)
	}
	if n, err := openFilesLimit(os.Getpid()); err != nil || n == 0 {
		t.Errorf("openFilesLimit(self) = %d, %v", n, err)
	}
}

func TestParseNoFile(t *testing.T) {
	t.Parallel()
	limits := "Limit                     Soft Limit           Hard Limit           Units     \nMax processes             96362                96362                processes \nMax open files            20000                20000                files     \n"
	if n, err := parseNoFile([]byte(limits)); err != nil || n != 20000 {
		t.Errorf("parseNoFile = %d, %v; want 20000", n, err)
	}
	if n, err := parseNoFile([]byte("Max open files            unlimited            unlimited            files\n")); err != nil || n != -1 {
		t.Errorf("parseNoFile(unlimited) = %d, %v; want -1", n, err)
	}
	if _, err := parseNoFile([]byte("Max processes 1 1 processes\n")); err == nil {
		t.Error("parseNoFile without the row did not fail")
	}
}

func TestParseGoroutines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		want    int64
		wantErr bool
	}{
		{"plain", "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 1234\n", 1234, false},
		{"labels and float", "go_goroutines_total 9\ngo_goroutines{instance=\"a\"} 5.0 1700000000\n", 5, false},
		{"missing", "go_threads 9\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseGoroutines(strings.NewReader(tt.text))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseGoroutines = %d, %v; want %d (error %t)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{5}, 5},
		{[]time.Duration{9, 1, 5}, 5},
		{[]time.Duration{4, 1, 3, 2}, 2}, // (2+3)/2 in integer nanoseconds
		{[]time.Duration{10, 20}, 15},
	}
	for _, tt := range tests {
		in := append([]time.Duration(nil), tt.in...)
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
		if diff := cmp.Diff(in, tt.in); diff != "" {
			t.Errorf("median modified its input (-before +after):\n%s", diff)
		}
	}
	if got := perChunk(2*time.Second, 100_000); got != 20 {
		t.Errorf("perChunk(2s, 100000) = %v µs, want 20", got)
	}
	if got := perChunk(time.Second, 0); got != 0 {
		t.Errorf("perChunk(1s, 0) = %v, want 0", got)
	}
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	got := commandLine([]string{"-runs", "3", "-targets", "limit,bridge", "-peer-dir", "/a b", "it's"})
	want := `bridge-bench -runs 3 -targets limit,bridge -peer-dir '/a b' 'it'\''s'`
	if got != want {
		t.Errorf("commandLine = %s\nwant %s", got, want)
	}
}

func TestParseSettings(t *testing.T) {
	t.Parallel()
	s, err := parseSettings(nil, io.Discard)
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if s.runs != 200 || s.chunks != 500 || s.concurrency != 10 || s.store != "embedded" || s.mode != "chunks" ||
		s.shape != "bulk" || s.pace != 0 || s.agent != "go" || s.reader != "go" ||
		!cmp.Equal(s.targets, []string{"relay", "limit", "bridge", "peer"}) {
		t.Errorf("defaults = %+v", s)
	}
	p, err := parseSettings([]string{"-shape", "paced"}, io.Discard)
	if err != nil {
		t.Fatalf("paced: %v", err)
	}
	if p.runs != 200 || p.chunks != 100 || p.concurrency != 100 || p.pace != 20*time.Millisecond || p.ttfe != 10 {
		t.Errorf("paced defaults = %+v", p)
	}
	p, err = parseSettings([]string{"-shape", "paced", "-chunks", "7", "-pace", "5ms", "-concurrency", "3", "-ttfe", "2"}, io.Discard)
	if err != nil || p.chunks != 7 || p.pace != 5*time.Millisecond || p.concurrency != 3 || p.ttfe != 2 {
		t.Errorf("paced with flags = %+v, %v", p, err)
	}
	for _, bad := range [][]string{
		{"-targets", "limit,nope"},
		{"-store", "postgres"},
		{"-mode", "fast"},
		{"-shape", "burst"},
		{"-agent", "python"},
		{"-reader", "curl"},
		{"-pace", "-1ms"},
		{"-mode", "streams", "-agent", "js"},
		{"-runs", "0"},
		{"extra"},
	} {
		if _, err := parseSettings(bad, io.Discard); err == nil {
			t.Errorf("parseSettings(%q) did not fail", bad)
		}
	}
}

// TestChunkStamps: a text delta the bridge merged from several chunks
// carries each chunk's stamp, and each counts.
func TestChunkStamps(t *testing.T) {
	got := chunkStamps([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"w1@100 w2@200 w3@300 "}`))
	if !slices.Equal(got, []int64{100, 200, 300}) {
		t.Errorf("chunkStamps = %v, want [100 200 300]", got)
	}
	if got := chunkStamps([]byte(`{"delta":"no stamp"}`)); len(got) != 0 {
		t.Errorf("chunkStamps of a text without a stamp = %v", got)
	}
}
