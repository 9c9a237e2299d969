package redisstore

import "github.com/a2a-agui-bridge/bridge/tasks/store"

// The contract's types under their own names, so this backend reads as it
// did inside package tasks (and merges with edits made there by rename).
type (
	Store       = store.Store
	Thread      = store.Thread
	ThreadKey   = store.ThreadKey
	Entry       = store.Entry
	LeaseLister = store.LeaseLister
)

var (
	ErrNotFound = store.ErrNotFound
	ErrConflict = store.ErrConflict
)
