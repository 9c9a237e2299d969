package tasks

import (
	"github.com/a2a-agui-bridge/bridge/tasks/store"
)

// The Store contract lives in package store, beside its backends; the
// engine and its callers name its types through these aliases.
type (
	Store             = store.Store
	Thread            = store.Thread
	ThreadKey         = store.ThreadKey
	Entry             = store.Entry
	MemberRecord      = store.MemberRecord
	ResolvedInterrupt = store.ResolvedInterrupt
	ActiveRun         = store.ActiveRun
	LeaseLister       = store.LeaseLister
)

// Store errors (store.ErrNotFound, store.ErrConflict).
var (
	ErrNotFound = store.ErrNotFound
	ErrConflict = store.ErrConflict
)

// clearActive ends the thread's active run in the record.
func clearActive(t *Thread) {
	if t.Active != nil {
		t.LastRunID = t.Active.RunID
	}
	t.Active = nil
}

// maxResolved bounds the answered interrupts a thread remembers.
const maxResolved = 64
