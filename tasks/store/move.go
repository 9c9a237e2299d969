package store

import (
	"context"
	"errors"
	"log/slog"
)

// MoveThread moves the thread at from, record, journal and interrupt index,
// to the key to, written there in one atomic write before the old record
// goes; nil without error when there is nothing to move (no thread, or one
// with a run in progress). A stale old record that could not be deleted is
// logged: the new one is what its caller reads from then on.
func MoveThread(ctx context.Context, s Store, from, to ThreadKey, log *slog.Logger) (*Thread, error) {
	th, err := s.GetThread(ctx, from)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if th.Principal != from.Principal || th.Active != nil {
		return nil, nil
	}
	var entries []Entry
	for after := int64(0); ; {
		page, err := s.Read(ctx, from, after, 1024)
		if err != nil {
			return nil, err
		}
		entries = append(entries, page...)
		if len(page) < 1024 {
			break
		}
		after = page[len(page)-1].Seq
	}
	oldVersion := th.Version
	th.Key, th.Principal, th.Version = to, to.Principal, 0
	if th.Version, err = s.PutThreadAndAppend(ctx, th, entries...); err != nil {
		return nil, err
	}
	for _, p := range th.Interrupts {
		if err := s.IndexInterrupt(ctx, p.Interrupt.ID, to); err != nil {
			return nil, err
		}
	}
	if err := s.DeleteThread(ctx, from, oldVersion); err != nil && !errors.Is(err, ErrNotFound) {
		log.Warn("a moved thread's old record stays", "thread_id", from.ThreadID, "agent", from.Agent, "error", err)
	}
	if len(entries) > 0 {
		// The old journal goes but its last entry (the store keeps one).
		_ = s.TrimJournal(ctx, from, entries[len(entries)-1].Seq)
	}
	return th, nil
}
