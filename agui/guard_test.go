package agui

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGuard(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		v1   bool
		// events are written in order; wantErr is the index of the first
		// rejected event (-1: none) and the generation/rule it names.
		events  []Event
		wantAt  int
		wantGen Generation
		rule    string
	}{
		{"reference stream, 0.0.x", false, referenceStream(), -1, 0, ""},
		{"reference stream, 1.0", true, referenceStream(), -1, 0, ""},
		{"interleaving fails 0.0.36 only", false, []Event{runStarted(), textStart("m"), toolStart("tc")}, 2, Gen0_0_36, RuleInsideText},
		{"interleaving is fine for 1.0", true, []Event{runStarted(), textStart("m"), toolStart("tc"), toolEnd("tc"), textEnd("m"), runFinished()}, -1, 0, ""},
		{"cancelled outcome needs 1.0", false, []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeCancelled})}, 1, Gen0_0_59, RuleOutcome},
		{"cancelled outcome for 1.0", true, []Event{runStarted(), runFinishedWith(&Outcome{Type: OutcomeCancelled})}, -1, 0, ""},
		{"subagents need 1.0", false, []Event{runStarted(), &SubagentStarted{Base: Base{SubagentRunID: "s"}, Name: "n"}}, 1, Gen0_0_36, RuleUnknownType},
		{"reasoning is 0.0.36-fatal", false, []Event{runStarted(), &ReasoningStart{MessageID: "r"}}, 1, Gen0_0_36, RuleUnknownType},
		{"empty delta is 0.0.36-fatal", false, []Event{runStarted(), textStart("m"), textContent("m", "")}, 2, Gen0_0_36, RuleEmptyDelta},
		{"malformed pointer is 1.0-fatal", true, []Event{runStarted(), &StateDelta{Delta: []PatchOp{{Op: "remove", Path: "x"}}}}, 1, Gen1_0, RulePatch},
		{"first event", true, []Event{textStart("m")}, 0, Gen1_0, RuleFirstEvent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewGuard(tc.v1)
			for i, e := range tc.events {
				err := g.Check(e)
				if i != tc.wantAt {
					if err != nil {
						t.Fatalf("event %d (%s): %v", i, e.Type(), err)
					}
					continue
				}
				var ve *VerifyError
				if !errors.As(err, &ve) {
					t.Fatalf("event %d: error = %v, want a *VerifyError", i, err)
				}
				if ve.Generation != tc.wantGen || ve.Rule != tc.rule {
					t.Errorf("event %d: rejected by %s/%s, want %s/%s", i, ve.Generation, ve.Rule, tc.wantGen, tc.rule)
				}
				return
			}
			if tc.wantAt >= 0 {
				t.Fatalf("event %d was accepted", tc.wantAt)
			}
		})
	}
}

func TestGuardNothingAfterTerminal(t *testing.T) {
	t.Parallel()
	for _, terminal := range []Event{runFinished(), runError()} {
		for _, v1 := range []bool{false, true} {
			g := NewGuard(v1)
			if err := g.Check(runStarted()); err != nil {
				t.Fatal(err)
			}
			if g.Terminated() {
				t.Fatal("terminated before the terminal event")
			}
			if err := g.Check(terminal); err != nil {
				t.Fatal(err)
			}
			if !g.Terminated() {
				t.Fatalf("not terminated after %s", terminal.Type())
			}
			// Some generations would accept these (§6.5 rules 2–3); the
			// bridge never writes them.
			for _, next := range []Event{runError(), runStarted(), custom(), nil} {
				if err := g.Check(next); !errors.Is(err, ErrAfterTerminal) {
					t.Errorf("v1=%v, after %s: Check = %v, want ErrAfterTerminal", v1, terminal.Type(), err)
				}
			}
		}
	}
	// A lone RUN_ERROR is a complete stream (matrix row 27).
	g := NewGuard(false)
	if err := g.Check(runError()); err != nil || !g.Terminated() {
		t.Errorf("lone RUN_ERROR: %v, terminated=%v", err, g.Terminated())
	}
}

// TestGuardIsAtomic: when one generation rejects an event the others must
// not have recorded it, or the guard and the client would disagree about
// what is open. Here 0.0.59 would accept the tool call inside the open
// text message; after 0.0.36 rejects it, the writer closes the text and
// opens the call properly, which only works if 0.0.59 forgot the first try.
func TestGuardIsAtomic(t *testing.T) {
	t.Parallel()
	g := NewGuard(false)
	for _, e := range []Event{runStarted(), textStart("m")} {
		if err := g.Check(e); err != nil {
			t.Fatal(err)
		}
	}
	before := []*Verifier{g.verifiers[0].clone(), g.verifiers[1].clone()}
	if err := g.Check(toolStart("tc")); err == nil {
		t.Fatal("tool call inside an open text message was accepted for 0.0.36")
	}
	if diff := cmp.Diff(before, []*Verifier{g.verifiers[0], g.verifiers[1]}, verifierState); diff != "" {
		t.Fatalf("a rejected event changed the guard (-before +after):\n%s", diff)
	}
	for _, e := range []Event{textEnd("m"), toolStart("tc"), toolEnd("tc"), runFinished()} {
		if err := g.Check(e); err != nil {
			t.Fatalf("%s: %v", e.Type(), err)
		}
	}
}

// TestGuardAgreesWithVerifiers: on random streams the guard accepts an
// event exactly when every generation it stands for accepts it, given the
// events the guard accepted before.
func TestGuardAgreesWithVerifiers(t *testing.T) {
	t.Parallel()
	alphabet := eventAlphabet()
	r := rand.New(rand.NewPCG(7, 8))
	for range 300 {
		events := randomStream(r, alphabet, 30)
		for _, v1 := range []bool{false, true} {
			gens := []Generation{Gen0_0_59, Gen0_0_36}
			if v1 {
				gens = []Generation{Gen1_0}
			}
			g := NewGuard(v1)
			var accepted []Event
			for i, e := range events {
				guardErr := g.Check(e)
				if errors.Is(guardErr, ErrAfterTerminal) {
					break
				}
				allAccept := true
				for _, gen := range gens {
					v := NewVerifier(gen)
					for _, prev := range accepted {
						if err := v.Check(prev); err != nil {
							t.Fatalf("%s rejects an event the guard accepted: %v", gen, err)
						}
					}
					if v.Check(e) != nil {
						allAccept = false
					}
				}
				if (guardErr == nil) != allAccept {
					t.Fatalf("event %d (%s): guard error %v, all generations accept: %v", i, e.Type(), guardErr, allAccept)
				}
				if guardErr == nil {
					accepted = append(accepted, e)
				}
			}
		}
	}
}

func BenchmarkGuardCheck(b *testing.B) {
	for _, bc := range []struct {
		name string
		v1   bool
	}{{"0.0.x", false}, {"1.0", true}} {
		b.Run(bc.name, func(b *testing.B) {
			g := NewGuard(bc.v1)
			for _, e := range []Event{runStarted(), textStart("m")} {
				if err := g.Check(e); err != nil {
					b.Fatal(err)
				}
			}
			e := &TextMessageContent{MessageID: "m", Delta: "It is 22 degrees."}
			b.ReportAllocs()
			for b.Loop() {
				if err := g.Check(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGuardStream checks a whole reference run (12 events, §10.4)
// through a fresh guard, which includes the guard's allocation.
func BenchmarkGuardStream(b *testing.B) {
	events := referenceStream()
	b.ReportAllocs()
	for b.Loop() {
		g := NewGuard(false)
		for _, e := range events {
			if err := g.Check(e); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestGuardFor: a guard for 0.0.59 alone takes the activity events that
// the two-generation guard of a request without protocolVersion refuses
// (0.0.36 rejects them), and still refuses what 0.0.59 does.
func TestGuardFor(t *testing.T) {
	t.Parallel()
	activity := &ActivitySnapshot{MessageID: "a", ActivityType: "a2ui-surface", Content: map[string]any{"operations": []any{}}}
	start := &RunStarted{ThreadID: "t", RunID: "r"}
	both := NewGuard(false)
	if err := both.Check(start); err != nil {
		t.Fatal(err)
	}
	if err := both.Check(activity); err == nil {
		t.Fatal("the guard for 0.0.59 and 0.0.36 took an activity")
	}
	g := NewGuardFor(Gen0_0_59)
	for _, e := range []Event{start, activity} {
		if err := g.Check(e); err != nil {
			t.Fatalf("%s: %v", e.Type(), err)
		}
	}
	if err := g.Check(&TextMessageContent{MessageID: "nope", Delta: "x"}); err == nil {
		t.Fatal("0.0.59's rules no longer hold")
	}
}
