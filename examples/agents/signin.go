package agents

import (
	"context"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Texts of the [Signin] agent.
const (
	SigninQuestion = "Please sign in so I can read your files."
	SigninAnswer   = "Signed in. You have 3 new files."
)

// Signin needs the user to sign in before it can work: it enters
// AUTH_REQUIRED and waits, with its execution still open as the A2A spec
// allows, until the credential arrives out of band — here a POST to the
// demo server's /signin/authorize?task=TASK_ID, standing in for an OAuth
// callback. Then it finishes by itself, on the same stream.
//
//	Task{SUBMITTED} → WORKING → AUTH_REQUIRED {text SigninQuestion, data {"authorize": URL path, "taskId"}}
//	  … authorize … → WORKING → Artifact "files" SigninAnswer → COMPLETED
//
// A user message on the task after the execution ended (the a2a-go server
// only delivers one then) also counts as the credential.
type Signin struct {
	cancelOnly
	Delay time.Duration
	Quit  <-chan struct{}
	gates *gates
}

// gates holds one channel per task waiting for its sign-in.
type gates struct {
	mu sync.Mutex
	m  map[a2a.TaskID]chan struct{}
}

func (g *gates) wait(id a2a.TaskID) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = make(map[a2a.TaskID]chan struct{})
	}
	if g.m[id] == nil {
		g.m[id] = make(chan struct{})
	}
	return g.m[id]
}

// open authorizes a task; it reports false for a task not waiting.
func (g *gates) open(id a2a.TaskID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, ok := g.m[id]
	if !ok {
		return false
	}
	select {
	case <-ch:
	default:
		close(ch)
	}
	return true
}

// Execute implements a2asrv.AgentExecutor.
func (a Signin) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		resumed := ec.StoredTask != nil && ec.StoredTask.Status.State == a2a.TaskStateAuthRequired
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		if !resumed {
			gate := a.gates.wait(ec.TaskID)
			details := a2a.NewDataPart(map[string]any{"authorize": "/signin/authorize?task=" + string(ec.TaskID), "taskId": string(ec.TaskID)})
			if !r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateAuthRequired, r.agentMessage(a2a.NewTextPart(SigninQuestion), details))) {
				return
			}
			select {
			case <-gate:
			case <-ctx.Done():
				return
			case <-a.Quit:
				r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, r.agentMessage(a2a.NewTextPart("agent is shutting down"))))
				return
			}
			if !r.status(a2a.TaskStateWorking, "") {
				return
			}
		}
		if !r.pause() || !r.artifact("files", a2a.NewTextPart(SigninAnswer)) {
			return
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// authorizeHandler serves POST /signin/authorize?task=ID.
func (a Signin) authorizeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.gates.open(a2a.TaskID(r.URL.Query().Get("task"))) {
			http.Error(w, "no task is waiting for that sign-in", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
