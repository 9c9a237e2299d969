package tasks

import (
	"context"
	"errors"

	"github.com/a2a-agui-bridge/bridge/auth"
	"github.com/a2a-agui-bridge/bridge/tasks/store"
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
	moved, merr := store.MoveThread(ctx, s.store, legacy, key, s.log)
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
