package agents

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// cancelLog records the CancelTask calls an agent received, in order, so
// tests can assert that a client's cancel reached the agent, and only once.
type cancelLog struct {
	a2asrv.PassthroughCallInterceptor
	mu  sync.Mutex
	ids []a2a.TaskID
}

// Before implements [a2asrv.CallInterceptor].
func (l *cancelLog) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	if r, ok := req.Payload.(*a2a.CancelTaskRequest); ok && r != nil {
		l.mu.Lock()
		l.ids = append(l.ids, r.ID)
		l.mu.Unlock()
	}
	return ctx, nil, nil
}

func (l *cancelLog) list() []a2a.TaskID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]a2a.TaskID{}, l.ids...)
}

// handler serves the log as {"taskIds": [...]}, one entry per CancelTask
// received.
func (l *cancelLog) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"taskIds": l.list()})
	})
}
