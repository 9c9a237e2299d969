// Package redisstore is the shared Store backend (store.kind: redis): any
// number of bridge processes open the same Redis and see one set of
// threads, interrupts and journals, and each one's Wait wakes for entries
// any of them appends. RedisStore's doc comment gives the key layout
// (layout 3: every key and set member of a thread carries its principal);
// keys of layouts 1 and 2 are migrated by the first instance that opens
// them (migrateRedisLayout).
package redisstore
