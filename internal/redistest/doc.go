// Package redistest starts real Redis deployments for tests, from the
// Debian redis-server binary: one server, a Redis Cluster of several
// primaries, and a primary with replicas watched by Sentinel (the same
// binary with --sentinel). Every server listens on a free loopback port,
// keeps nothing on disk, and dies with the test (Stop, or the context the
// caller passes). Readiness is read from the servers themselves — a log
// line, CLUSTER INFO, INFO replication, SENTINEL commands — never guessed
// with a sleep.
package redistest
