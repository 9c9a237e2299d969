package store_test

import (
	"testing"
	"testing/synctest"

	"github.com/a2a-agui-bridge/bridge/tasks/store"
	"github.com/a2a-agui-bridge/bridge/tasks/store/storetest"
)

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(*testing.T) store.Store { return store.NewMemoryStore() })
}

func TestMemoryWaitBlocks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		storetest.WaitBlocks(t, store.NewMemoryStore())
	})
}

func BenchmarkMemoryAppend(b *testing.B) {
	storetest.BenchmarkAppend(b, store.NewMemoryStore())
}
