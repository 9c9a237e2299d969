package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// The soak's configs are ones the bridge accepts: the plain one, and under
// abuse one with API keys for the honest and hostile principals, the
// per-principal rate and the endless agent's run timeout. The run budget
// is written only when asked for, under limits.
func TestBridgeConfig(t *testing.T) {
	t.Parallel()
	var ups []upstream
	for _, a := range agents.Agents(agents.Options{}) {
		ups = append(ups, upstream{a.Name, "http://127.0.0.1:1/" + a.Name + "/", ""})
	}
	ups = append(ups, upstream{endlessName, "http://127.0.0.1:2/", "20s"})
	plain := settings{concurrency: 20, store: "embedded"}
	abuse := plain
	abuse.abuse = abuseSettings{on: true, rate: 100, endlessTimeout: 20 * time.Second}
	for name, s := range map[string]settings{"plain": plain, "abuse": abuse} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.Parse([]byte(bridgeConfig(s, 8080, "/tmp/x.db", ups)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !s.abuse.on {
				if len(cfg.Auth.APIKeys) != 0 {
					t.Errorf("the plain soak has API keys")
				}
				return
			}
			var principals []string
			for _, k := range cfg.Auth.APIKeys {
				principals = append(principals, k.Principal)
			}
			want := []string{"honest-0", "honest-1", "honest-2", mallory, flooder, slowpoke}
			if diff := cmp.Diff(want, principals); diff != "" {
				t.Errorf("principals (-want +got):\n%s", diff)
			}
			if got := cfg.Limits.PerPrincipal.RequestsPerSecond; got != 100 {
				t.Errorf("rate %v", got)
			}
			if got := cfg.Agents[len(ups)-1]; got.Name != endlessName || got.Timeouts.Run.Std() != 20*time.Second {
				t.Errorf("the endless agent is %s, with run timeout %s", got.Name, got.Timeouts.Run)
			}
		})
	}
	abuse.abuse.maxRunBytes = 1 << 20
	var doc struct {
		Limits map[string]any `yaml:"limits"`
	}
	if err := yaml.Unmarshal([]byte(bridgeConfig(abuse, 8080, "/tmp/x.db", ups)), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Limits["maxRunBytes"]; got != 1<<20 {
		t.Errorf("limits.maxRunBytes = %v, want %d", got, 1<<20)
	}
}

// The endless agent's handler streams until CancelTask, which ends the
// stream with CANCELED; and a task whose client closed its stream still
// answers CancelTask, as the bridge sends it after closing the stream of a
// run it gave up on.
func TestEndlessAgentCancel(t *testing.T) {
	t.Parallel()
	agent, err := startEndless(t.Context(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(agent.Close)
	client, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{
		a2a.NewAgentInterface(agent.url+"jsonrpc", a2a.TransportProtocolJSONRPC),
	})
	if err != nil {
		t.Fatal(err)
	}
	// stream reads n chunks, then cancels the task (before or after
	// closing the stream) and returns the last event the stream carried.
	stream := func(n int, closeFirst bool) (last a2a.Event, task a2a.TaskID) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		chunks := 0
		for ev, err := range client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go"))}) {
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			last, task = ev, ev.TaskInfo().TaskID
			if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
				if chunks++; chunks == n {
					if closeFirst {
						return last, task
					}
					if _, err := client.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task}); err != nil {
						t.Fatalf("cancel a running task: %v", err)
					}
				}
			}
			if chunks > n+1000 {
				t.Fatal("the stream goes on after the cancel")
			}
		}
		return last, task
	}
	last, _ := stream(3, false)
	if up, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || up.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("the cancelled stream ended with %T %+v", last, last)
	}
	_, task := stream(3, true)
	// The execution ends once the agent sees the stream closed.
	for deadline := time.Now().Add(10 * time.Second); agent.h.isRunning(task); {
		if time.Now().After(deadline) {
			t.Fatal("the execution runs on after its client left")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, err := client.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task})
	if err != nil {
		t.Fatalf("cancel a task whose client left: %v", err)
	}
	if got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel answered %s", got.Status.State)
	}
}

// tail follows a run's SSE stream without keeping it: it stops at a byte
// limit between events, goes on from there, and notes each distinct
// terminal event once by sequence number with its code.
func TestTail(t *testing.T) {
	t.Parallel()
	sse := "id: 1\ndata: {\"type\":\"RUN_STARTED\"}\n\n" +
		"id: 2\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"e1......\"}\n\n" +
		": keep-alive\n\n" +
		"id: 3\ndata: {\"type\":\"RUN_ERROR\",\"message\":\"too much\",\"code\":\"run_too_large\"}\n\n"
	tl := newTail()
	br := bufio.NewReader(strings.NewReader(sse))
	if err := tl.read(br, 10); err != nil {
		t.Fatal(err)
	}
	if tl.lastSeq != 1 || len(tl.terminals) != 0 {
		t.Fatalf("after 10 bytes: seq %d, terminals %v", tl.lastSeq, tl.terminals)
	}
	if err := tl.read(br, -1); err != nil {
		t.Fatal(err)
	}
	if tl.lastSeq != 3 || tl.bytes != int64(len(sse)-1) { // it stops at the terminal event's data line
		t.Fatalf("seq %d, %d bytes of %d", tl.lastSeq, tl.bytes, len(sse))
	}
	// The same terminal again (a subscription's copy) is one terminal; a
	// second, different one is not.
	tl.event(3, []byte(`{"type":"RUN_ERROR","message":"too much","code":"run_too_large"}`))
	if diff := cmp.Diff(map[int64]string{3: codeRunTooLarge}, tl.terminals); diff != "" {
		t.Fatalf("terminals (-want +got):\n%s", diff)
	}
	tl.event(4, []byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`))
	if diff := cmp.Diff(map[int64]string{3: codeRunTooLarge, 4: "finished"}, tl.terminals); diff != "" {
		t.Fatalf("terminals (-want +got):\n%s", diff)
	}
	// A frame without an id (the bridge ending a stream, not journaled)
	// is noted at sequence number 0, not at the id before it.
	cut := newTail()
	sse = "id: 7\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"e1\"}\n\n" +
		"data: {\"type\":\"RUN_ERROR\",\"message\":\"lost\",\"code\":\"internal\"}\n\n"
	if err := cut.read(bufio.NewReader(strings.NewReader(sse)), -1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int64]string{0: "internal"}, cut.terminals); diff != "" || cut.lastSeq != 7 {
		t.Fatalf("last seq %d, terminals (-want +got):\n%s", cut.lastSeq, diff)
	}
}

// The slow clients pass a server that cuts them within its bound and
// report one that does not as a violation. Every bound is shortened: the
// bridge's own are tested in aguihttp and cmd/bridge.
func TestSlowClientsAreJudged(t *testing.T) {
	t.Parallel()
	short := cuts{body: 300 * time.Millisecond, header: 300 * time.Millisecond, slack: time.Second, tick: 20 * time.Millisecond}
	// cutting answers a body that does not arrive in time with 400 and
	// closes the connection, as the bridge does, and headers with a close.
	cutting := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(short.body))
		if _, err := io.ReadAll(r.Body); err != nil {
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	cutting.Config.ReadHeaderTimeout = short.header
	cutting.Start()
	t.Cleanup(cutting.Close)
	// patient reads whatever it gets and never answers.
	patient, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { patient.Close() })
	go func() {
		for {
			c, err := patient.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()

	for _, tc := range []struct {
		name, base string
		want       map[string]int64
	}{
		{"cutting", cutting.URL, map[string]int64{}},
		{"patient", "http://" + patient.Addr().String(), map[string]int64{"slow body: not cut": 1, "slowloris: not cut": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newAbuser(tc.base, abuseSettings{})
			a.cut = short
			a.slowBody(t.Context())
			a.slowHeaders(t.Context())
			r := a.report()
			if diff := cmp.Diff(tc.want, r.Violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s\n%v", diff, r.Samples)
			}
			if r.SlowBodies.Requests != 1 || r.Slowloris.Requests != 1 {
				t.Errorf("%d slow bodies, %d slow headers judged, want one each", r.SlowBodies.Requests, r.Slowloris.Requests)
			}
		})
	}
}

// A soak is ok only when every run passed, the bridge came back within the
// slack on each figure, and the abuse met no violation and happened at all.
func TestJudge(t *testing.T) {
	t.Parallel()
	s := settings{goroutineSlack: 20, heapSlack: 2, fdSlack: 10, rssSlack: 64}
	back := report{Runs: 1, Goroutines: [3]int{10, 900, 30}, HeapInuseMiB: [3]float64{4, 500, 24},
		RSSAnonMiB: [3]float64{8, 700, 80}, FDs: [3]int{30, 90, 40}}
	met := func() *abuseReport {
		return &abuseReport{want: abuseSettings{endless: 1, floods: 1, slowBodies: 1, slowloris: 1, oversized: 1},
			Endless: endlessTally{Runs: 1}, Floods: floodTally{Frames: 1}, SlowBodies: probeTally{Requests: 1},
			Slowloris: probeTally{Requests: 1}, Oversized: probeTally{Requests: 1}, Violations: map[string]int64{}}
	}
	for _, tc := range []struct {
		name   string
		change func(r *report)
		ok     bool
	}{
		{"back", func(*report) {}, true},
		{"under abuse", func(r *report) { r.Abuse = met() }, true},
		{"a failed run", func(r *report) { r.Failures = map[string]int64{"streamer: answer": 1} }, false},
		{"no run", func(r *report) { r.Runs = 0 }, false},
		{"goroutines", func(r *report) { r.Goroutines[2] = 31 }, false},
		{"heap", func(r *report) { r.HeapInuseMiB[2] = 24.1 }, false},
		{"rss", func(r *report) { r.RSSAnonMiB[2] = 80.1 }, false},
		{"fds", func(r *report) { r.FDs[2] = 41 }, false},
		{"a violation", func(r *report) { r.Abuse = met(); r.Abuse.Violations["slow body: not cut"] = 1 }, false},
		{"no slow body met", func(r *report) { r.Abuse = met(); r.Abuse.SlowBodies.Requests = 0 }, false},
		{"no endless run ended", func(r *report) { r.Abuse = met(); r.Abuse.Endless.Runs = 0 }, false},
	} {
		r := back
		tc.change(&r)
		r.judge(s)
		if r.OK != tc.ok {
			t.Errorf("%s: ok %v, want %v (%+v)", tc.name, r.OK, tc.ok, r)
		}
	}
}
