package limits_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/limits"
)

func TestAllow(t *testing.T) {
	t.Parallel()
	l := limits.New(limits.Options{RequestsPerSecond: 1, Burst: 2})
	for i := range 2 {
		if err := l.Allow("alice"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	err := l.Allow("alice")
	var le *limits.Error
	if !errors.As(err, &le) || le.HTTPStatus() != http.StatusTooManyRequests || le.Code != limits.CodeRateLimited {
		t.Fatalf("third request: %v; want 429 rate_limited", err)
	}
	if le.Retry <= 0 || le.Retry > time.Second {
		t.Errorf("Retry = %v, want within (0, 1s]", le.Retry)
	}
	if err := l.Allow("bob"); err != nil {
		t.Errorf("bob has his own bucket: %v", err)
	}
	if err := limits.New(limits.Options{}).Allow("alice"); err != nil {
		t.Errorf("no rate: %v", err)
	}
}

func TestAcquireRun(t *testing.T) {
	t.Parallel()
	l := limits.New(limits.Options{RunsPerPrincipal: 1, Runs: 2})
	ra, err := l.AcquireRun("alice")
	if err != nil {
		t.Fatal(err)
	}
	var le *limits.Error
	if _, err := l.AcquireRun("alice"); !errors.As(err, &le) || le.Code != limits.CodeTooManyRuns || le.HTTPStatus() != 429 {
		t.Fatalf("alice's second run: %v; want 429 too_many_runs", err)
	}
	rb, err := l.AcquireRun("bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AcquireRun("carol"); !errors.As(err, &le) || le.Code != limits.CodeOverloaded || le.HTTPStatus() != 503 {
		t.Fatalf("third run on the instance: %v; want 503 bridge_overloaded", err)
	}
	ra()
	ra() // idempotent
	if _, err := l.AcquireRun("carol"); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	rb()
	if _, err := l.AcquireRun("alice"); err != nil {
		t.Fatalf("alice after her release: %v", err)
	}
}

// SetOptions changes the caps for what comes next: runs already in
// progress count against the new cap, whether or not a cap was set when
// they started, and a new rate starts with a full bucket.
func TestSetOptions(t *testing.T) {
	t.Parallel()
	l := limits.New(limits.Options{})
	release, err := l.AcquireRun("alice")
	if err != nil {
		t.Fatal(err)
	}
	l.SetOptions(limits.Options{RunsPerPrincipal: 1, RequestsPerSecond: 1, Burst: 1})
	if _, err := l.AcquireRun("alice"); err == nil {
		t.Fatal("a second run after the cap was set to 1 was admitted")
	}
	release()
	if _, err := l.AcquireRun("alice"); err != nil {
		t.Fatalf("a run after the first ended: %v", err)
	}
	if err := l.Allow("bob"); err != nil {
		t.Fatal(err)
	}
	if err := l.Allow("bob"); err == nil {
		t.Fatal("a second request within the second at 1/s was allowed")
	}
	l.SetOptions(limits.Options{})
	if err := l.Allow("bob"); err != nil {
		t.Fatalf("with the rate limit removed: %v", err)
	}
}

// TestRunLimits: each check answers "" within its limit and zero means no
// limit; the budget counts neither opening snapshot against the run, and
// is crossed by what the agents sent or what the run journaled.
func TestRunLimits(t *testing.T) {
	if code, _ := limits.EventTooLarge("a", 10, 10); code != "" {
		t.Errorf("an event at the limit: %q", code)
	}
	if code, _ := limits.EventTooLarge("a", 0, 1<<30); code != "" {
		t.Errorf("no limit: %q", code)
	}
	if code, _ := limits.EventTooLarge("a", 10, 11); code != agui.CodeEventTooLarge {
		t.Errorf("an event past the limit: %q", code)
	}
	if code, _ := limits.StateTooLarge("a", 10, func() int { return 11 }); code != agui.CodeStateTooLarge {
		t.Errorf("state past the limit: %q", code)
	}
	b := limits.RunBudget{Limit: 100}
	b.Journal(agui.EventStateSnapshot, 1000) // the opening snapshots repeat the thread
	b.Journal(agui.EventMessagesSnapshot, 1000)
	b.Receive(100)
	if code, _ := b.Spent("a"); code != "" {
		t.Errorf("a run at its budget: %q", code)
	}
	b.Journal(agui.EventStateSnapshot, 101) // a later snapshot is the run's own
	if code, _ := b.Spent("a"); code != agui.CodeRunTooLarge {
		t.Errorf("a run past its budget: %q", code)
	}
}
