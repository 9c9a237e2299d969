package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// route picks the member a router team sends this run to, and says why:
//
//  1. the member the client names in forwardedProps.agent;
//  2. the member the thread went to last, while its task is still open
//     (an interrupt or a task waiting for more), so a conversation stays
//     with the agent that holds it;
//  3. the member whose card skills best match the user's new text
//     (routeScore); ties and no match at all go to the first member listed.
//
// It is deterministic: the same text and cards give the same choice.
func (t *teamRun) route(ctx context.Context) (member string, score float64, reason string) {
	members := t.spec.Members
	if name := forwardedAgent(t.d.in); name != "" {
		if slices.Contains(members, name) {
			return name, 1, "forwardedProps.agent names it"
		}
		t.d.log.Info("forwardedProps.agent names no member of the team; routing by skills", "agent", name)
	}
	if r := t.d.thread.Routed; r != "" && slices.Contains(members, r) {
		if rec := t.d.thread.Members[r]; rec != nil && rec.TaskState != "" && !a2a.IsTerminal(a2a.TaskState(rec.TaskState)) {
			return r, 1, "its task on this thread is still open"
		}
	}
	text := newUserText(t.d.in, t.d.thread.SeenMessageIDs)
	best, bestScore, bestWhy := members[0], 0.0, ""
	for _, name := range members {
		var skills []a2a.AgentSkill
		if ag, err := t.specs[name].Connect(ctx); err == nil {
			if c, ok := ag.(interface{ Card() *a2a.AgentCard }); ok && c.Card() != nil {
				skills = c.Card().Skills
			}
		}
		s, why := routeScore(text, skills)
		if s > bestScore {
			best, bestScore, bestWhy = name, s, why
		}
	}
	if bestScore == 0 {
		return best, 0, "no member's skills match the message; the first member answers"
	}
	return best, bestScore, bestWhy
}

// forwardedAgent is forwardedProps.agent when it is a string.
func forwardedAgent(in *agui.RunAgentInput) string {
	var props struct {
		Agent string `json:"agent"`
	}
	if len(in.ForwardedProps) == 0 || json.Unmarshal(in.ForwardedProps, &props) != nil {
		return ""
	}
	return props.Agent
}

// newUserText is the text of the user messages the agent has not seen.
func newUserText(in *agui.RunAgentInput, seen []string) string {
	var b strings.Builder
	for _, m := range in.Messages {
		if m.Role != agui.RoleUser || slices.Contains(seen, m.ID) || m.Content == nil {
			continue
		}
		b.WriteString(m.Content.Text)
		for _, p := range m.Content.Parts {
			b.WriteByte(' ')
			b.WriteString(p.Text)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// routeScore scores how well text matches an agent's skills: each word of
// the text counts once, by the best place it appears — a skill tag (3), a
// word of a skill's name (2), a word of its description or examples (1).
// why lists the matches.
func routeScore(text string, skills []a2a.AgentSkill) (score float64, why string) {
	type place struct {
		weight float64
		where  string
	}
	index := map[string]place{}
	note := func(word string, p place) {
		if old, ok := index[word]; !ok || p.weight > old.weight {
			index[word] = p
		}
	}
	for _, s := range skills {
		for _, tag := range s.Tags {
			for _, w := range words(tag) {
				note(w, place{3, fmt.Sprintf("tag %q of skill %q", tag, s.Name)})
			}
		}
		for _, w := range words(s.Name) {
			note(w, place{2, fmt.Sprintf("skill %q", s.Name)})
		}
		for _, w := range words(s.Description + " " + strings.Join(s.Examples, " ")) {
			note(w, place{1, fmt.Sprintf("skill %q", s.Name)})
		}
	}
	matched := map[string]place{}
	for _, w := range words(text) {
		if p, ok := index[w]; ok {
			matched[w] = p
		}
	}
	if len(matched) == 0 {
		return 0, ""
	}
	keys := make([]string, 0, len(matched))
	for w := range matched {
		keys = append(keys, w)
		score += matched[w].weight
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, w := range keys {
		parts[i] = fmt.Sprintf("%q (%s)", w, matched[w].where)
	}
	return score, "matched " + strings.Join(parts, ", ")
}

// words splits text into lowercase words of three or more letters or
// digits, without common English function words.
func words(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if len([]rune(f)) >= 3 && !stopWords[f] {
			out = append(out, f)
		}
	}
	return out
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for with that this what when where which who whom whose how
		are was were been being have has had does did can could would should will shall may might must
		you your yours our ours their theirs its his her hers them they there here from into onto about
		please want need like some any all not but just also than then too very get got make made give me my`) {
		m[w] = true
	}
	return m
}()
