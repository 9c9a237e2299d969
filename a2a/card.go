package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
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

// cardURL is where the card is read from: the configured card URL, else
// the well-known path under the agent's URL.
func cardURL(o Options) string {
	if o.CardURL != "" {
		return o.CardURL
	}
	return strings.TrimSuffix(o.URL, "/") + "/.well-known/agent-card.json"
}

// fetchCard GETs the card and parses it. It sends A2A-Version: 1.0
// because servers treat a missing header as 0.3 and a JS server with legacy
// compat then returns a union card (§8), plus the static headers (an agent
// may protect its card like its endpoints). The body is read up to
// Options.MaxCardBytes; signatures are verified on these raw bytes, before
// the SDK's types drop field presence (§6 of the protocol notes).
func fetchCard(ctx context.Context, hc *http.Client, o Options) (*AgentCard, error) {
	u := cardURL(o)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	version := string(a2asdk.Version)
	for k, v := range o.Headers {
		if strings.EqualFold(k, a2asdk.SvcParamVersion) {
			version = v // an explicit header wins; never send two
			continue
		}
		req.Header.Set(k, v)
	}
	req.Header.Set(a2asdk.SvcParamVersion, version)
	req.Header.Set("Accept", "application/json")
	if o.Propagator != nil {
		o.Propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	resp, err := hc.Do(req)
	if err != nil {
		var te *TrustError
		if errors.As(err, &te) {
			return nil, te // a refused redirect: not an unreachable agent
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
		return nil, fmt.Errorf("card request failed: %w", &HTTPStatusError{StatusCode: resp.StatusCode, Status: resp.Status})
	}
	body, err := readCard(resp.Body, o.maxCardBytes())
	if err != nil {
		return nil, err
	}
	if o.TrustedKeys != nil {
		if err := o.TrustedKeys.VerifyCard(body); err != nil {
			return nil, err
		}
	}
	card, err := ParseCard(body)
	if err != nil {
		return nil, fmt.Errorf("parse card: %w", err)
	}
	return card, nil
}

// readCard reads at most limit bytes; a larger card is a TrustError, not a
// parse error of its truncated prefix.
func readCard(r io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, &TrustError{Reason: fmt.Sprintf("the card is larger than %d bytes (maxCardBytes)", limit)}
	}
	return body, nil
}

func (o Options) maxCardBytes() int64 {
	if o.MaxCardBytes > 0 {
		return o.MaxCardBytes
	}
	return DefaultMaxCardBytes
}
