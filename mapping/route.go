package mapping

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// A router team picks a member by the user's new text against the skills
// on the members' cards (RouteScore), unless the client names one
// (ForwardedAgent).

// ForwardedAgent is forwardedProps.agent when it is a string.
func ForwardedAgent(in *agui.RunAgentInput) string {
	var props struct {
		Agent string `json:"agent"`
	}
	if len(in.ForwardedProps) == 0 || json.Unmarshal(in.ForwardedProps, &props) != nil {
		return ""
	}
	return props.Agent
}

// NewUserText is the text of the user messages the agent has not seen.
func NewUserText(in *agui.RunAgentInput, seen []string) string {
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

// RouteScore scores how well text matches an agent's skills: each word of
// the text counts once, by the best place it appears — a skill tag (3), a
// word of a skill's name (2), a word of its description or examples (1).
// why lists the matches.
func RouteScore(text string, skills []a2a.AgentSkill) (score float64, why string) {
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
