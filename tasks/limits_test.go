package tasks

import (
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/agui"
)

func TestRecentMessages(t *testing.T) {
	t.Parallel()
	msg := func(id, role string, n int) agui.Message {
		return agui.Message{ID: id, Role: role, Content: agui.TextContent(strings.Repeat("x", n))}
	}
	ids := func(ms []agui.Message) string {
		var b strings.Builder
		for _, m := range ms {
			b.WriteString(m.ID)
		}
		return b.String()
	}
	conv := []agui.Message{msg("a", agui.RoleUser, 100), msg("b", agui.RoleAssistant, 100), msg("c", agui.RoleTool, 100),
		msg("d", agui.RoleAssistant, 100), msg("e", agui.RoleUser, 100)}
	for _, tc := range []struct {
		limit int64
		want  string
	}{
		{0, "abcde"},      // no bound
		{10_000, "abcde"}, // all fit
		{300, "de"},       // c would fit, but a tool result without its call is dropped
		{150, "e"},        // one message
		{10, "e"},         // the last message always stays
		{600, "bcde"},     // whole messages only: a would make 700
	} {
		if got := ids(recentMessages(conv, tc.limit)); got != tc.want {
			t.Errorf("limit %d: kept %q, want %q", tc.limit, got, tc.want)
		}
	}
}
