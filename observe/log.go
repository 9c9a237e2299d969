package observe

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// Log formats (the config's log.format).
const (
	LogText = "text"
	LogJSON = "json"
)

// NewLogger returns the bridge's logger writing to w: format is LogText
// (key=value lines, for people) or LogJSON (one object per line, for log
// pipelines); level is debug, info, warn or error.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	return NewRedactingLogger(w, format, level, nil)
}

// NewRedactingLogger is NewLogger whose records never show the value of
// an attribute named in redact (case-insensitive), nor of such a key inside
// a map or header value: it is written as "[REDACTED]".
func NewRedactingLogger(w io.Writer, format, level string, redact []string) (*slog.Logger, error) {
	lv := new(slog.LevelVar)
	if err := SetLevel(lv, level); err != nil {
		return nil, err
	}
	return NewRedactingLoggerVar(w, format, lv, redact)
}

// SetLevel sets lv to level (debug, info, warn or error).
func SetLevel(lv *slog.LevelVar, level string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	lv.Set(l)
	return nil
}

// NewRedactingLoggerVar is NewRedactingLogger with its level read from lv
// at every record, so a config reload can change it.
func NewRedactingLoggerVar(w io.Writer, format string, lv *slog.LevelVar, redact []string) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: lv}
	if len(redact) > 0 {
		opts.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr { return redactAttr(a, redact) }
	}
	switch format {
	case LogText, "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case LogJSON:
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", format)
}

// redacted replaces a sensitive value in logs.
const redacted = "[REDACTED]"

func redactAttr(a slog.Attr, keys []string) slog.Attr {
	if sensitiveKey(a.Key, keys) {
		return slog.String(a.Key, redacted)
	}
	if a.Value.Kind() == slog.KindAny {
		switch v := a.Value.Any().(type) {
		case map[string]any, []any, map[string]string, http.Header:
			return slog.Any(a.Key, redactValue(v, keys))
		}
	}
	return a
}

// redactValue copies v with the values of sensitive keys replaced.
func redactValue(v any, keys []string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if sensitiveKey(k, keys) {
				out[k] = redacted
			} else {
				out[k] = redactValue(e, keys)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, keys)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			if sensitiveKey(k, keys) {
				e = redacted
			}
			out[k] = e
		}
		return out
	case http.Header:
		out := make(http.Header, len(x))
		for k, e := range x {
			if sensitiveKey(k, keys) {
				e = []string{redacted}
			}
			out[k] = e
		}
		return out
	}
	return v
}

func sensitiveKey(k string, keys []string) bool {
	for _, s := range keys {
		if strings.EqualFold(k, s) {
			return true
		}
	}
	return false
}
