package a2a

import (
	"testing"

	"github.com/google/uuid"
)

func TestStatePredicates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s                     TaskState
		terminal, interrupted bool
	}{
		{TaskStateUnspecified, false, false},
		{TaskStateSubmitted, false, false},
		{TaskStateWorking, false, false},
		{TaskStateInputRequired, false, true},
		{TaskStateAuthRequired, false, true},
		{TaskStateCompleted, true, false},
		{TaskStateFailed, true, false},
		{TaskStateCanceled, true, false},
		{TaskStateRejected, true, false},
	}
	for _, tc := range tests {
		if IsTerminal(tc.s) != tc.terminal || IsInterrupted(tc.s) != tc.interrupted {
			t.Errorf("%q: IsTerminal=%v IsInterrupted=%v", tc.s, IsTerminal(tc.s), IsInterrupted(tc.s))
		}
	}
}

func TestNewUserMessage(t *testing.T) {
	t.Parallel()
	a := NewUserMessage("", "", NewTextPart("hi"))
	b := NewUserMessage("ctx-1", "task-1", NewDataPart(map[string]any{"k": 1}), NewURLPart("https://x/a.pdf", "application/pdf", "a.pdf"), NewRawPart([]byte{1}, "image/png", "a.png"))
	if _, err := uuid.Parse(a.ID); err != nil || a.ID == b.ID {
		t.Errorf("message ids %q, %q: want distinct UUIDs", a.ID, b.ID)
	}
	if a.Role != RoleUser || a.ContextID != "" || a.TaskID != "" || a.Parts[0].Text() != "hi" {
		t.Errorf("a = %+v", a)
	}
	if b.ContextID != "ctx-1" || b.TaskID != "task-1" || len(b.Parts) != 3 {
		t.Errorf("b = %+v", b)
	}
	if u := b.Parts[1]; u.URL() != "https://x/a.pdf" || u.MediaType != "application/pdf" || u.Filename != "a.pdf" {
		t.Errorf("url part = %+v", u)
	}
	if r := b.Parts[2]; string(r.Raw()) != "\x01" || r.MediaType != "image/png" || r.Filename != "a.png" {
		t.Errorf("raw part = %+v", r)
	}
}
