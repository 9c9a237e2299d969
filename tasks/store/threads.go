package store

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrBadCursor means a ListThreads cursor is not one a list returned.
var ErrBadCursor = errors.New("tasks: malformed thread list cursor")

// ThreadSummary is what a thread list shows of one thread. Stores keep it
// beside the record, written with it, so a list of thousands of threads
// decodes summaries of a few hundred bytes rather than whole records.
type ThreadSummary struct {
	Key            ThreadKey `json:"-"`
	Agent          string    `json:"g"`
	ThreadID       string    `json:"d"`
	Version        int64     `json:"v"`
	CreatedAt      time.Time `json:"c,omitzero"`
	LastActivityAt time.Time `json:"a"`
	// Title is the thread's first user message, cut to MaxTitleRunes.
	Title        string `json:"t,omitempty"`
	MessageCount int    `json:"n,omitempty"`
	// Active says a run is in progress (as the record says: an exclusive
	// store's run left by a dead process still counts), Interrupts how
	// many interrupts are pending.
	Active     bool `json:"r,omitempty"`
	Interrupts int  `json:"i,omitempty"`
}

// MaxTitleRunes bounds a summary's title.
const MaxTitleRunes = 80

// Summarize is the summary of th as stored at version (the stores call it
// with the version they are writing).
func Summarize(th *Thread, version int64) ThreadSummary {
	s := ThreadSummary{Key: th.Key, Agent: th.Key.Agent, ThreadID: th.Key.ThreadID, Version: version,
		CreatedAt: th.CreatedAt, LastActivityAt: th.UpdatedAt, MessageCount: len(th.Messages),
		Active: th.Active != nil, Interrupts: len(th.Interrupts)}
	for _, m := range th.Messages {
		if m.Role != "user" || m.Content == nil {
			continue
		}
		text := m.Content.Text
		for _, p := range m.Content.Parts {
			if text == "" && p.Type == "text" {
				text = p.Text
			}
		}
		if text = strings.TrimSpace(text); text != "" {
			s.Title = cutRunes(text, MaxTitleRunes)
			break
		}
	}
	return s
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Stamp sets what a store writing th stamps on it: the time of the write
// and, on the write that creates it (th.Version 0), the creation time.
func Stamp(th *Thread, now time.Time) {
	th.UpdatedAt = now
	if th.Version == 0 {
		th.CreatedAt = now
	}
}

// ListQuery asks for a page of one principal's threads.
type ListQuery struct {
	Principal string
	// Agents, when not empty, keeps only the threads of these agents.
	Agents []string
	// Cursor continues a list where the page that returned it ended (""
	// from the start); Limit bounds the page (at least 1).
	Cursor string
	Limit  int
}

// Wants reports whether the query's agent filter keeps agent.
func (q ListQuery) Wants(agent string) bool {
	if len(q.Agents) == 0 {
		return true
	}
	for _, a := range q.Agents {
		if a == agent {
			return true
		}
	}
	return false
}

// ThreadPage is one page of a thread list, newest activity first; Next
// continues it ("" at the end).
type ThreadPage struct {
	Threads []ThreadSummary
	Next    string
}

// CompareSummaries orders summaries as lists are: newest activity first,
// then by agent and thread id. Every backend lists in this order.
func CompareSummaries(a, b ThreadSummary) int {
	if c := b.LastActivityAt.Compare(a.LastActivityAt); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(a.Agent, b.Agent), strings.Compare(a.ThreadID, b.ThreadID))
}

// cursorJSON is a cursor's content: the position of the last summary
// listed.
type cursorJSON struct {
	At     int64  `json:"a"`
	Agent  string `json:"g"`
	Thread string `json:"d"`
}

// CursorAfter is the cursor that continues a list after s.
func CursorAfter(s ThreadSummary) string {
	b, _ := json.Marshal(cursorJSON{At: s.LastActivityAt.UnixNano(), Agent: s.Agent, Thread: s.ThreadID})
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a cursor into the position it continues after: a
// summary that CompareSummaries orders after the returned one is on the
// next page. ErrBadCursor when it is not one a list returned.
func ParseCursor(c string) (ThreadSummary, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	var v cursorJSON
	if err != nil || json.Unmarshal(b, &v) != nil || v.At <= 0 {
		return ThreadSummary{}, ErrBadCursor
	}
	return ThreadSummary{LastActivityAt: time.Unix(0, v.At), Agent: v.Agent, ThreadID: v.Thread}, nil
}

// Page cuts sorted (in CompareSummaries order, all after the query's
// cursor) to the query's limit, with the cursor of the next page when more
// remain. Backends that gather candidates then sort them use it.
func Page(sorted []ThreadSummary, limit int) ThreadPage {
	if len(sorted) <= limit {
		return ThreadPage{Threads: sorted}
	}
	sorted = sorted[:limit]
	return ThreadPage{Threads: sorted, Next: CursorAfter(sorted[limit-1])}
}

// ThreadLife is what the thread list, deletion, retention and the per
// principal cap need of a store. Every backend implements it (storetest
// checks), beside Store.
type ThreadLife interface {
	// ListThreads returns a page of q.Principal's threads (ErrBadCursor for
	// a cursor no list returned).
	ListThreads(ctx context.Context, q ListQuery) (ThreadPage, error)
	// CountThreads is how many threads principal has.
	CountThreads(ctx context.Context, principal string) (int, error)
	// PurgeThread removes a thread and everything filed under it: the
	// record, its journal, its summary, its place in the active and lease
	// indexes and the interrupt index entries of the interrupts the record
	// names (pending and answered). With version > 0 it removes nothing
	// unless the record is still at that version (else ErrConflict); with
	// 0 it removes whatever is there. A thread without a record is
	// ErrNotFound (its journal, if any, is removed all the same). Waits on
	// the journal end with ErrNotFound.
	PurgeThread(ctx context.Context, key ThreadKey, version int64) error
	// IdleThreads returns up to limit threads without an active run whose
	// last activity is before before, oldest first: what a retention
	// sweep deletes (with PurgeThread at the summary's version).
	IdleThreads(ctx context.Context, before time.Time, limit int) ([]ThreadSummary, error)
}

// InterruptIDs are the interrupt ids th's record names, pending and
// answered: the interrupt index entries PurgeThread removes with it. An
// interrupt answered so long ago that the record forgot it keeps its
// entry, which then names a thread that does not exist: a resume with it
// is refused as one with an unknown id.
func InterruptIDs(th *Thread) []string {
	var ids []string
	for _, p := range th.Interrupts {
		ids = append(ids, p.Interrupt.ID)
	}
	for _, r := range th.Resolved {
		ids = append(ids, r.ID)
	}
	if th.Active != nil {
		for _, r := range th.Active.Resolved {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// JournalGone is what Wait answers when its journal is empty although the
// caller saw entries (after > 0): the thread was purged.
func JournalGone(last, after int64) bool { return last == 0 && after > 0 }
