package tasks_test

import (
	"testing"
	"testing/synctest"

	"github.com/a2a-agui-bridge/bridge/tasks"
	"github.com/a2a-agui-bridge/bridge/tasks/storetest"
)

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(*testing.T) tasks.Store { return tasks.NewMemoryStore() })
}

func TestMemoryWaitBlocks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		waitBlocks(t, tasks.NewMemoryStore())
	})
}

// waitBlocks proves, inside a synctest bubble, what storetest can only
// make likely without fake time: Wait on a journal with nothing new stays
// blocked until an Append from another goroutine. It suits backends that
// notify in process; a network backend's reads never count as durably
// blocked, so synctest.Wait would not return for it.
func waitBlocks(t *testing.T, s tasks.Store) {
	t.Helper()
	defer s.Close()
	k := tasks.ThreadKey{Agent: "agent", ThreadID: "t"}
	if err := s.Append(t.Context(), k, tasks.Entry{Seq: 1, RunID: "run-1", Event: []byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait(t.Context(), k, 1) }()
	synctest.Wait()
	select {
	case err := <-done:
		t.Fatalf("Wait(after 1) returned %v with no entry after 1", err)
	default:
	}
	if err := s.Append(t.Context(), k, tasks.Entry{Seq: 2, RunID: "run-1", Event: []byte(`{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait after Append: %v", err)
		}
	default:
		t.Fatal("Wait still blocked after an Append")
	}
}
