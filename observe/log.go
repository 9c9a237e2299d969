package observe

import (
	"fmt"
	"io"
	"log/slog"
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
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case LogText, "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case LogJSON:
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", format)
}
