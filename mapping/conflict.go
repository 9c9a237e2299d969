package mapping

import (
	"encoding/json"
	"fmt"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// ChangedMessage finds a user message of a run's input whose id the thread
// already holds (record, its conversation) with other content: the id was
// used, so the message would be taken as seen and never reach the agent
// while its new text was silently dropped (issue 33 item 12: after an
// agent's URL changed, new text under an old id answered 200 with nothing
// sent). It returns a description of the first such message, or "".
// A message the record no longer holds (a long thread's record keeps its
// newest part) cannot be compared and passes.
func ChangedMessage(in, record []agui.Message) string {
	if len(in) == 0 || len(record) == 0 {
		return ""
	}
	held := make(map[string]*agui.Message, len(record))
	for i := range record {
		if record[i].Role == agui.RoleUser {
			held[record[i].ID] = &record[i]
		}
	}
	for i, m := range in {
		old := held[m.ID]
		if m.Role != agui.RoleUser || old == nil {
			continue
		}
		if !sameContent(old.Content, m.Content) {
			return fmt.Sprintf("messages[%d] reuses the id %q of an earlier message of this thread with other content: send new content under a new message id", i, m.ID)
		}
	}
	return ""
}

func sameContent(a, b *agui.Content) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
