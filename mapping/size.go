package mapping

import (
	"encoding/json"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// EventSize is what an A2A event carries for the client: the text, data
// and file bytes of its parts (a task's history is not counted: it
// repeats what earlier events carried, and is not forwarded).
func EventSize(ev a2a.Event) int {
	n := 0
	add := func(parts []*a2a.Part) {
		for _, p := range parts {
			if p == nil {
				continue
			}
			switch p.Content.(type) {
			case a2a.TextPart:
				n += len(p.Text())
			case a2a.RawPart:
				n += len(p.Raw())
			case a2a.URLPart:
				n += len(p.URL())
			case a2a.DataPart:
				b, _ := json.Marshal(p.Data())
				n += len(b)
			}
		}
	}
	msg := func(m *a2a.Message) {
		if m != nil {
			add(m.Parts)
		}
	}
	switch e := ev.(type) {
	case *a2a.Message:
		msg(e)
	case *a2a.Task:
		msg(e.Status.Message)
		for _, a := range e.Artifacts {
			if a != nil {
				add(a.Parts)
			}
		}
	case *a2a.StatusUpdate:
		msg(e.Status.Message)
	case *a2a.ArtifactUpdate:
		if e.Artifact != nil {
			add(e.Artifact.Parts)
		}
	}
	return n
}

// RecentMessages is the newest part of a conversation that a thread's
// record keeps: whole messages, newest first, while their JSON fits in
// limit (AgentSpec.MaxRunBytes; zero: all), at least the last one, and no
// tool result left without its call. The record is rewritten at every
// step of every run and the conversation opens each run of a client that
// sends only its new message (MESSAGES_SNAPSHOT), so a thread that kept
// every answer whole would cost each run more than the last: bounded, a
// long-lived thread costs the same at its thousandth run as at its tenth.
// A client that keeps its own history loses nothing (it is not sent a
// snapshot while it holds every message the record does).
func RecentMessages(msgs []agui.Message, limit int64) []agui.Message {
	if limit <= 0 || len(msgs) < 2 || SurelyFits(msgs, limit) {
		return msgs
	}
	first, size := len(msgs)-1, int64(0)
	for i := len(msgs) - 1; i >= 0; i-- {
		b, err := json.Marshal(msgs[i])
		if size += int64(len(b)); err != nil || size > limit && i < len(msgs)-1 {
			break
		}
		first = i
	}
	for first < len(msgs)-1 && msgs[first].Role == agui.RoleTool {
		first++
	}
	return msgs[first:]
}

// SurelyFits says, without encoding them, that msgs' JSON takes no more
// than limit: every run's release asks, and encoding a long answer to
// learn that it fits was a few percent of the bridge's CPU on bulk
// streams. It bounds plain text messages only — a string's JSON is at most
// six bytes per byte of it (\u00XX), and keys and punctuation are within a
// fixed allowance per message and per tool call; a message with parts, an
// object or metadata is not bounded here, and the caller measures exactly.
func SurelyFits(msgs []agui.Message, limit int64) bool {
	const perMessage, perCall = 256, 128
	var n int64
	for _, m := range msgs {
		if m.Metadata != nil || m.Content != nil && m.Content.Kind != agui.ContentText {
			return false
		}
		text := len(m.ID) + len(m.Role) + len(m.Name) + len(m.ToolCallID) + len(m.Error) + len(m.ActivityType) +
			len(m.EncryptedValue) + len(m.SubagentRunID)
		if m.Content != nil {
			text += len(m.Content.Text)
		}
		for _, c := range m.ToolCalls {
			if c.Metadata != nil {
				return false
			}
			text += len(c.ID) + len(c.Type) + len(c.EncryptedValue) + len(c.Function.Name) + len(c.Function.Arguments)
			n += perCall
		}
		if n += perMessage + 6*int64(text); n > limit {
			return false
		}
	}
	return true
}
