package store

import "sync"

// GroupWriter queues writes and carries out all that wait at once in one
// group: the embedded store's group commit (one transaction, one sync) and
// the Redis store's pipelined appends (one round trip). A group starts as
// soon as the previous one ends, with no delay to gather more, so a lone
// write waits for nothing but itself.
//
// The caller that finds no group in flight writes the group holding its
// own request, then leaves the groups that formed meanwhile to a
// goroutine: a caller that stayed to write them would not return while
// other runs keep writing, and its run's events, not yet shown to anyone,
// would wait behind every other run's.
type GroupWriter[R any] struct {
	// Write carries out one group and answers each of its requests.
	Write func(group []R)

	mu      sync.Mutex
	queue   []R
	writing bool
}

// Add queues r and returns once the group holding it was handed to Write
// by this caller, or when another caller's or the goroutine's group will
// carry it: the caller waits for r's own answer.
func (g *GroupWriter[R]) Add(r R) {
	g.mu.Lock()
	g.queue = append(g.queue, r)
	lead := !g.writing
	g.writing = true
	g.mu.Unlock()
	if lead && g.writeNext() {
		go func() {
			for g.writeNext() {
			}
		}()
	}
}

// writeNext writes the requests queued now and reports whether more queued
// meanwhile, which the caller must then write (writing stays set); one
// goroutine at a time runs it: the one that set writing.
func (g *GroupWriter[R]) writeNext() (more bool) {
	g.mu.Lock()
	group := g.queue
	g.queue = nil
	g.mu.Unlock()
	g.Write(group)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.writing = false
		return false
	}
	return true
}
