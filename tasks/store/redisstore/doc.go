// Package redisstore is the shared Store backend (store.kind: redis): any
// number of bridge processes open the same Redis and see one set of
// threads, interrupts and journals, and each one's Wait wakes for entries
// any of them appends. RedisStore's doc comment gives the key layout.
package redisstore
