package store

import (
	"runtime"
	"sort"
	"sync"
	"testing"
)

// TestGroupWriterLeaderReturnsWithItsOwnGroup: requests that queue while a
// group is written go out together in the next group, and the caller that
// wrote the first group returns without writing theirs.
func TestGroupWriterLeaderReturnsWithItsOwnGroup(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var groups [][]int
	started := make(chan struct{}, 2)
	release := make(chan struct{}, 2)
	g := &GroupWriter[int]{Write: func(group []int) {
		started <- struct{}{}
		<-release
		mu.Lock()
		groups = append(groups, append([]int(nil), group...))
		mu.Unlock()
	}}

	leaderDone := make(chan struct{})
	go func() { g.Add(0); close(leaderDone) }()
	<-started // the leader writes group [0]
	for i := 1; i <= 3; i++ {
		g.Add(i) // queued behind the write in flight: returns at once
	}
	release <- struct{}{}
	<-started // the second group is being written, by someone else
	select {
	case <-leaderDone:
	default:
		t.Fatal("the leader stayed to write the group that formed behind its own")
	}
	release <- struct{}{}
	for {
		mu.Lock()
		n := len(groups)
		mu.Unlock()
		if n == 2 {
			break
		}
		runtime.Gosched() // until the second write is recorded
	}
	if len(groups[0]) != 1 || groups[0][0] != 0 {
		t.Errorf("first group %v, want [0]", groups[0])
	}
	second := groups[1]
	sort.Ints(second)
	if len(second) != 3 || second[0] != 1 || second[2] != 3 {
		t.Errorf("second group %v, want the three that queued: [1 2 3]", second)
	}
	release <- struct{}{} // for the write below, made on this goroutine
	g.Add(4)              // nothing in flight: this caller writes it
	<-started
	if len(groups) != 3 || groups[2][0] != 4 {
		t.Errorf("groups %v, want a third group [4] written by its own caller", groups)
	}
}
