package mapping

import "strings"

// Redacted replaces the value of a sensitive key.
const Redacted = "[REDACTED]"

// Redact returns v (plain JSON: maps, slices, scalars) with the value of
// every object key in keys (case-insensitive) replaced by Redacted, at any
// depth. v itself is not modified; unchanged subtrees are shared.
func Redact(v any, keys []string) any {
	if len(keys) == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if sensitive(k, keys) {
				out[k] = Redacted
			} else {
				out[k] = Redact(e, keys)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Redact(e, keys)
		}
		return out
	}
	return v
}

func sensitive(k string, keys []string) bool {
	for _, s := range keys {
		if strings.EqualFold(k, s) {
			return true
		}
	}
	return false
}
