package mapping

import (
	"encoding/json"
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
		if got := ids(RecentMessages(conv, tc.limit)); got != tc.want {
			t.Errorf("limit %d: kept %q, want %q", tc.limit, got, tc.want)
		}
	}
}

// TestSurelyFitsIsABound: whenever surelyFits says a conversation fits, its
// JSON does, for the text that escapes worst (control bytes, HTML
// characters, invalid UTF-8, line separators) and tool calls.
func TestSurelyFitsIsABound(t *testing.T) {
	t.Parallel()
	worst := strings.Repeat("\x01<>&\xff\u2028\"\\", 40)
	conv := []agui.Message{
		{ID: worst, Role: agui.RoleUser, Content: agui.TextContent(worst), Name: worst},
		{ID: "a", Role: agui.RoleAssistant, ToolCalls: []agui.ToolCall{{ID: worst, Type: "function",
			Function: agui.FunctionCall{Name: worst, Arguments: worst}, EncryptedValue: worst}}},
		{ID: "t", Role: agui.RoleTool, ToolCallID: worst, Content: agui.TextContent(worst), Error: worst},
		{ID: worst, Role: agui.RoleAssistant, EncryptedValue: worst, SubagentRunID: worst, ActivityType: worst},
	}
	size := int64(0)
	for _, m := range conv {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		size += int64(len(b))
	}
	fitsAt := int64(-1)
	for limit := int64(0); limit <= 8*size; limit += 17 {
		if SurelyFits(conv, limit) {
			if limit < size {
				t.Fatalf("surelyFits(%d) but the JSON is %d bytes", limit, size)
			}
			if fitsAt < 0 {
				fitsAt = limit
			}
		}
	}
	if fitsAt < 0 {
		t.Fatalf("surelyFits never said yes up to 8× the JSON's %d bytes", size)
	}
	withMetadata := []agui.Message{{ID: "m", Role: agui.RoleUser, Metadata: map[string]any{"k": "v"}}}
	if SurelyFits(withMetadata, 1<<30) {
		t.Error("surelyFits bounded a message with metadata")
	}
}
