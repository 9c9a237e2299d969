package errcode

import (
	"net/http"
	"testing"
)

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code string
		want int
	}{
		{ThreadBusy, http.StatusConflict},
		{A2ATimeout, http.StatusGatewayTimeout},
		{A2ACanceled, 499},
		{Overloaded, http.StatusServiceUnavailable},
		{ServerShutdown, 0}, // ends streams only
		{"no_such_code", 0},
	} {
		if got := HTTPStatus(c.code); got != c.want {
			t.Errorf("HTTPStatus(%q) = %d, want %d", c.code, got, c.want)
		}
	}
}

func TestAgentHealthCodes(t *testing.T) {
	t.Parallel()
	if !Unreachable(A2ATimeout) || Unreachable(A2AInternal) || !SaysNothingOfAgent(A2ACanceled) || SaysNothingOfAgent(A2AUnavailable) {
		t.Error("the agent's health codes changed")
	}
}
