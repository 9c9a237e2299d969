// Package boltstore is the embedded Store backend (store.kind: embedded,
// the default): one bbolt file that survives restarts and crashes, written
// by one process. BoltStore's doc comment gives the file's layout.
package boltstore
