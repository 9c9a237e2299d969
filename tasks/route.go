package tasks

import (
	"context"
	"slices"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/mapping"
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
func (c *crew) route(ctx context.Context) (member string, score float64, reason string) {
	members := c.spec.Members
	if name := mapping.ForwardedAgent(c.d.in); name != "" {
		if slices.Contains(members, name) {
			return name, 1, "forwardedProps.agent names it"
		}
		c.d.log.Info("forwardedProps.agent names no member of the team; routing by skills", "agent", name)
	}
	if r := c.d.thread.Routed; r != "" && slices.Contains(members, r) {
		if rec := c.d.thread.Members[r]; rec != nil && rec.TaskState != "" && !a2a.IsTerminal(a2a.TaskState(rec.TaskState)) {
			return r, 1, "its task on this thread is still open"
		}
	}
	text := mapping.NewUserText(c.d.in, c.d.thread.SeenMessageIDs)
	best, bestScore, bestWhy := members[0], 0.0, ""
	for _, name := range members {
		var skills []a2a.AgentSkill
		if ag, err := c.specs[name].Connect(ctx); err == nil {
			if c, ok := ag.(interface{ Card() *a2a.AgentCard }); ok && c.Card() != nil {
				skills = c.Card().Skills
			}
		}
		s, why := mapping.RouteScore(text, skills)
		if s > bestScore {
			best, bestScore, bestWhy = name, s, why
		}
	}
	if bestScore == 0 {
		return best, 0, "no member's skills match the message; the first member answers"
	}
	return best, bestScore, bestWhy
}
