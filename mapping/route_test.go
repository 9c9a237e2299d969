package mapping

import (
	"strings"
	"testing"

	"github.com/a2a-agui-bridge/bridge/a2a"
)

func TestRouteScore(t *testing.T) {
	t.Parallel()
	weather := []a2a.AgentSkill{{ID: "f", Name: "Forecast", Description: "Weather forecasts for any city", Tags: []string{"weather", "rain"}}}
	travel := []a2a.AgentSkill{{ID: "b", Name: "Book flights", Description: "Books flights and hotels", Tags: []string{"travel"}, Examples: []string{"Fly me to Rome"}}}
	ws, why := RouteScore("Will it rain in Lisbon? I need the forecast", weather)
	ts, _ := RouteScore("Will it rain in Lisbon? I need the forecast", travel)
	if ws <= ts || !strings.Contains(why, `"rain" (tag "rain" of skill "Forecast")`) {
		t.Fatalf("weather %v (%s) vs travel %v", ws, why, ts)
	}
	if s, _ := RouteScore("book me a flight to Rome", travel); s == 0 {
		t.Fatal("travel should match a flight booking")
	}
	if s, why := RouteScore("the and for", weather); s != 0 || why != "" {
		t.Fatalf("stop words matched: %v %s", s, why)
	}
}
