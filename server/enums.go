package server

import (
	"fmt"

	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/mapping"
	"github.com/a2a-agui-bridge/bridge/tasks"
)

// The configuration and the packages it configures each define the values
// of an enum: config imports no bridge package (DESIGN.md) and the packages
// do not import config (STYLE.md, convention 10). The wiring joins them
// here, one explicit switch per enum instead of a string cast, so a value
// one side spells differently cannot slip through; enums_test.go fails
// when a value is added on one side only. config.Validate rejects values
// outside its constants before anything is built, so the default cases
// are unreachable: reaching one is a bug of this file, not bad input.

// teamStrategy is the engine's strategy for a configured one.
func teamStrategy(s string) tasks.Strategy {
	switch s {
	case config.StrategyRouter:
		return tasks.StrategyRouter
	case config.StrategyParallel:
		return tasks.StrategyParallel
	case config.StrategySequential:
		return tasks.StrategySequential
	}
	panic(fmt.Sprintf("config accepted team strategy %q, which teamStrategy does not map", s))
}

// statusTextPolicy is the translator's policy for a configured statusText;
// unset is the translator's default.
func statusTextPolicy(s string) mapping.StatusTextPolicy {
	switch s {
	case "":
		return ""
	case config.StatusTextAuto:
		return mapping.StatusAuto
	case config.StatusTextMessage:
		return mapping.StatusAsMessage
	case config.StatusTextActivity:
		return mapping.StatusAsActivity
	case config.StatusTextReasoning:
		return mapping.StatusAsReasoning
	case config.StatusTextNone:
		return mapping.StatusHidden
	}
	panic(fmt.Sprintf("config accepted statusText %q, which statusTextPolicy does not map", s))
}

// a2uiMode is the A2UI switch for a configured one; unset is the
// translator's default.
func a2uiMode(s string) mapping.A2UIMode {
	switch s {
	case "":
		return ""
	case config.A2UIAuto:
		return mapping.A2UIAuto
	case config.A2UIOn:
		return mapping.A2UIOn
	case config.A2UIOff:
		return mapping.A2UIOff
	}
	panic(fmt.Sprintf("config accepted a2ui %q, which a2uiMode does not map", s))
}
