package main

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// endlessAgent serves [agents.Endless] over A2A JSON-RPC 1.0 on a
// loopback port until Close.
type endlessAgent struct {
	url string // base URL; the card is at url + ".well-known/agent-card.json"
	h   *directHandler
	srv *http.Server
	wg  sync.WaitGroup
}

func startEndless(ctx context.Context, interval time.Duration) (*endlessAgent, error) {
	exec := agents.Endless{ChunkBytes: 1024, Interval: interval}
	return startDirect(ctx, "endless", "Appends 1 KiB chunks to one artifact without end (cmd/bridge-soak -abuse).", exec)
}

// startHeavy serves [agents.Heavy] (issue 33's CPU-heavy agents: one
// event of many data parts, or many small state changes beside a large
// state) the same way.
func startHeavy(ctx context.Context) (*endlessAgent, error) {
	return startDirect(ctx, "heavy", "Events within every limit that cost work in proportion to the state (cmd/bridge-soak -abuse).", agents.Heavy{})
}

func startDirect(ctx context.Context, name, description string, exec a2asrv.AgentExecutor) (*endlessAgent, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String() + "/"
	card := &a2a.AgentCard{
		Name:                name,
		Description:         description,
		Version:             "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(base+"jsonrpc", a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              []a2a.AgentSkill{{ID: name, Name: name, Description: description, Tags: []string{"soak"}}},
	}
	h := newDirectHandler(exec, a2asrv.NewHandler(exec, a2asrv.WithLogger(slog.New(slog.DiscardHandler))))
	mux := http.NewServeMux()
	mux.Handle("GET "+a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	a := &endlessAgent{url: base, h: h, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	a.wg.Go(func() { _ = a.srv.Serve(ln) })
	return a, nil
}

func (a *endlessAgent) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if a.srv.Shutdown(ctx) != nil {
		_ = a.srv.Close()
	}
	a.wg.Wait()
}

// directHandler streams a new task straight from the executor, and cancels
// a running one on CancelTask; every other method goes to a2asrv's default
// handler. The default handler copies the whole task on every artifact
// update (a2a-go v2.3.1), which for an artifact that never ends makes the
// agent, not the bridge, the soak's bottleneck.
//
// A task whose stream the client closed still answers CancelTask for a
// while, as a2asrv's would (there the task outlives its stream): the
// bridge closes a run's stream before it cancels the task it gave up on.
type directHandler struct {
	a2asrv.RequestHandler
	exec a2asrv.AgentExecutor

	mu      sync.Mutex
	running map[a2a.TaskID]*execution
	left    map[a2a.TaskID]*execution // streams the client closed, for CancelTask
}

type execution struct {
	contextID string
	cancel    context.CancelCauseFunc
	ended     time.Time
}

// leftFor is how long a task whose client left answers CancelTask.
const leftFor = time.Minute

// errCancelTask is the cause of an execution ended by CancelTask.
var errCancelTask = errors.New("the task was cancelled")

func newDirectHandler(exec a2asrv.AgentExecutor, rest a2asrv.RequestHandler) *directHandler {
	return &directHandler{RequestHandler: rest, exec: exec, running: map[a2a.TaskID]*execution{}, left: map[a2a.TaskID]*execution{}}
}

// SendStreamingMessage implements [a2asrv.RequestHandler].
func (h *directHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	if req == nil || req.Message == nil || req.Message.TaskID != "" {
		return h.RequestHandler.SendStreamingMessage(ctx, req) // errors and follow-ups
	}
	return func(yield func(a2a.Event, error) bool) {
		ec := &a2asrv.ExecutorContext{Message: req.Message, TaskID: a2a.NewTaskID(), ContextID: req.Message.ContextID, Metadata: req.Metadata}
		if ec.ContextID == "" {
			ec.ContextID = a2a.NewContextID()
		}
		ectx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		e := &execution{contextID: ec.ContextID, cancel: cancel}
		h.mu.Lock()
		h.running[ec.TaskID] = e
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.running, ec.TaskID)
			now := time.Now()
			for id, old := range h.left {
				if now.Sub(old.ended) > leftFor {
					delete(h.left, id)
				}
			}
			if !errors.Is(context.Cause(ectx), errCancelTask) {
				e.ended = now
				h.left[ec.TaskID] = e
			}
		}()
		for ev, err := range h.exec.Execute(ectx, ec) {
			if !yield(ev, err) {
				return
			}
		}
		if errors.Is(context.Cause(ectx), errCancelTask) && ctx.Err() == nil {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
		}
	}
}

// isRunning reports whether the task's execution still runs.
func (h *directHandler) isRunning(id a2a.TaskID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running[id] != nil
}

// CancelTask implements [a2asrv.RequestHandler].
func (h *directHandler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	h.mu.Lock()
	e := h.running[req.ID]
	if e == nil {
		e = h.left[req.ID]
		delete(h.left, req.ID)
	}
	h.mu.Unlock()
	if e == nil {
		return h.RequestHandler.CancelTask(ctx, req)
	}
	e.cancel(errCancelTask)
	return &a2a.Task{ID: req.ID, ContextID: e.contextID, Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}}, nil
}
