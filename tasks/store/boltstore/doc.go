// Package boltstore is the embedded Store backend (store.kind: embedded,
// the default): one bbolt file that survives restarts and crashes, written
// by one process. BoltStore's doc comment gives the file's layout: one
// bucket per principal, so that threads are kept per principal. A file of
// format 1, written before that, is migrated in the transaction that opens
// it (migrateFormat1).
package boltstore
