package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"go.opentelemetry.io/otel/propagation"
)

// compatParser understands v1.0 cards, v0.3 cards (url, preferredTransport,
// additionalInterfaces, type-style security schemes) and the union of both.
var compatParser = a2av0.NewAgentCardParser()

// ParseCard parses an agent card from any peer we know of. It first rewrites
// the ProtoJSON StringList form of security requirement scopes,
// {"schemes":{"x":{"list":["a"]}}}, to the plain array a2a-go expects,
// {"schemes":{"x":["a"]}} (pitfall P1: a2a-go v2.3.1 cannot parse cards from
// the JS SDK and other spec-following servers otherwise), then hands the bytes
// to the SDK's v0.3 compat parser, which also accepts v1.0 and union cards.
// Nil interface entries are dropped so that transport selection never
// dereferences one.
func ParseCard(b []byte) (*AgentCard, error) {
	card, err := compatParser(fixSecurityLists(b))
	if err != nil {
		return nil, err
	}
	card.SupportedInterfaces = slices.DeleteFunc(card.SupportedInterfaces, func(i *a2asdk.AgentInterface) bool { return i == nil })
	return card, nil
}

// fixSecurityLists rewrites StringList scope objects in the top-level
// securityRequirements and in skills[].securityRequirements. It changes only
// what it recognises: on any unexpected shape it returns the input unchanged
// and lets the real parser report the problem.
func fixSecurityLists(b []byte) []byte {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return b
	}
	changed := false
	if raw, ok := top["securityRequirements"]; ok {
		if fixed, ok := fixRequirements(raw); ok {
			top["securityRequirements"] = fixed
			changed = true
		}
	}
	if raw, ok := top["skills"]; ok {
		var skills []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &skills); err == nil {
			skillsChanged := false
			for _, s := range skills {
				if s == nil {
					continue
				}
				if reqs, ok := s["securityRequirements"]; ok {
					if fixed, ok := fixRequirements(reqs); ok {
						s["securityRequirements"] = fixed
						skillsChanged = true
					}
				}
			}
			if skillsChanged {
				if out, err := json.Marshal(skills); err == nil {
					top["skills"] = out
					changed = true
				}
			}
		}
	}
	if !changed {
		return b
	}
	out, err := json.Marshal(top)
	if err != nil {
		return b
	}
	return out
}

// fixRequirements rewrites one securityRequirements array. It reports
// whether anything changed.
func fixRequirements(raw json.RawMessage) (json.RawMessage, bool) {
	var reqs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &reqs); err != nil {
		return nil, false
	}
	changed := false
	for _, req := range reqs {
		if req == nil {
			continue
		}
		var schemes map[string]json.RawMessage
		if err := json.Unmarshal(req["schemes"], &schemes); err != nil || schemes == nil {
			continue
		}
		schemesChanged := false
		for name, scopes := range schemes {
			if t := bytes.TrimSpace(scopes); len(t) == 0 || t[0] != '{' {
				continue
			}
			// A StringList object; ProtoJSON omits an empty "list", so {} means
			// "no scopes".
			var sl struct {
				List []string `json:"list"`
			}
			if err := json.Unmarshal(scopes, &sl); err != nil {
				continue
			}
			if sl.List == nil {
				sl.List = []string{}
			}
			fixed, err := json.Marshal(sl.List)
			if err != nil {
				continue
			}
			schemes[name] = fixed
			schemesChanged = true
		}
		if schemesChanged {
			out, err := json.Marshal(schemes)
			if err != nil {
				continue
			}
			req["schemes"] = out
			changed = true
		}
	}
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(reqs)
	if err != nil {
		return nil, false
	}
	return out, true
}

// fetchCard resolves the card with the SDK resolver over our HTTP client.
// It sends A2A-Version: 1.0 because servers treat a missing header as 0.3 and
// a JS server with legacy compat then returns a union card (§8), plus the
// static headers (an agent may protect its card like its endpoints).
func fetchCard(ctx context.Context, hc *http.Client, o Options) (*AgentCard, error) {
	res := &agentcard.Resolver{Client: hc, CardParser: ParseCard}
	var opts []agentcard.ResolveOption
	version := string(a2asdk.Version)
	for k, v := range o.Headers {
		if strings.EqualFold(k, a2asdk.SvcParamVersion) {
			version = v // an explicit header wins; never send two
			continue
		}
		opts = append(opts, agentcard.WithRequestHeader(k, v))
	}
	opts = append(opts, agentcard.WithRequestHeader(a2asdk.SvcParamVersion, version))
	if o.Propagator != nil {
		carrier := propagation.MapCarrier{}
		o.Propagator.Inject(ctx, carrier)
		for k, v := range carrier {
			opts = append(opts, agentcard.WithRequestHeader(k, v))
		}
	}
	base := o.URL
	if o.CardURL != "" {
		// Resolve joins a path onto the base; an empty path keeps the
		// explicit card URL as it is.
		base = o.CardURL
		opts = append(opts, agentcard.WithPath(""))
	}
	card, err := res.Resolve(ctx, base, opts...)
	if err == nil {
		return card, nil
	}
	var st *agentcard.ErrStatusNotOK
	if errors.As(err, &st) {
		err = fmt.Errorf("card request failed: %w", &HTTPStatusError{StatusCode: st.StatusCode, Status: st.Status})
	}
	return nil, err
}
