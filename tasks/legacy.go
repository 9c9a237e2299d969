package tasks

import (
	"context"
	"errors"

	"github.com/a2a-agui-bridge/bridge/auth"
)

// The migration of stored threads to per-issuer JWT principals (issue 33
// item 9). A JWT caller's principal used to be the token's bare subject,
// shared with API-key principals; it is now "<issuer>#<sub>"
// (auth.JWTPrincipal). A thread filed under the bare subject, when only
// that subject can have made it (auth.Authenticator.LegacyPrincipal: the
// subject is no API key's principal), moves to the new principal the
// first time its caller names it: record, journal and interrupt index, in
// one atomic write and a delete. Until then the thread list does not show
// it; a thread with a run in progress moves once the run is over.

// getThread is the store's GetThread of key, after moving the caller's
// thread from its legacy principal when there is one.
func (s *Service) getThread(ctx context.Context, key ThreadKey) (*Thread, error) {
	th, err := s.store.GetThread(ctx, key)
	old := auth.LegacyPrincipalFrom(ctx)
	if !errors.Is(err, ErrNotFound) || old == "" || old == key.Principal {
		return th, err
	}
	legacy := ThreadKey{Agent: key.Agent, Principal: old, ThreadID: key.ThreadID}
	moved, merr := s.moveThread(ctx, legacy, key)
	switch {
	case errors.Is(merr, ErrConflict):
		// Another request moved it first.
		return s.store.GetThread(ctx, key)
	case merr != nil:
		s.log.Warn("a thread could not be moved to its caller's new principal", "thread_id", key.ThreadID, "agent", key.Agent, "error", merr)
		return th, err
	case moved == nil:
		return th, err
	}
	return moved, nil
}

// moveThread moves the thread at from to to; nil without error when there
// is nothing to move.
func (s *Service) moveThread(ctx context.Context, from, to ThreadKey) (*Thread, error) {
	th, err := s.store.GetThread(ctx, from)
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
		page, err := s.store.Read(ctx, from, after, 1024)
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
	if th.Version, err = s.store.PutThreadAndAppend(ctx, th, entries...); err != nil {
		return nil, err
	}
	for _, p := range th.Interrupts {
		if err := s.store.IndexInterrupt(ctx, p.Interrupt.ID, to); err != nil {
			return nil, err
		}
	}
	if err := s.store.DeleteThread(ctx, from, oldVersion); err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Warn("a moved thread's old record stays", "thread_id", from.ThreadID, "agent", from.Agent, "error", err)
	}
	if len(entries) > 0 {
		// The old journal goes but its last entry (the store keeps one).
		_ = s.store.TrimJournal(ctx, from, entries[len(entries)-1].Seq)
	}
	return th, nil
}
