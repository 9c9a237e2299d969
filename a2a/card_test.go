package a2a

import (
	"encoding/json"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
)

func TestParseCard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         string
		ifaces     []*a2asdk.AgentInterface
		security   a2asdk.SecurityRequirementsOptions
		skillSec   a2asdk.SecurityRequirementsOptions
		streaming  bool
		extendedOK bool
	}{
		{
			name: "v1 protojson lists",
			in: `{"name":"a","supportedInterfaces":[{"url":"http://a/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
			      "securityRequirements":[{"schemes":{"oauth":{"list":["read","write"]},"key":{}}}],
			      "skills":[{"id":"s","securityRequirements":[{"schemes":{"oauth":{"list":["admin"]}}}]}]}`,
			ifaces:   []*a2asdk.AgentInterface{{URL: "http://a/rpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}},
			security: a2asdk.SecurityRequirementsOptions{{"oauth": {"read", "write"}, "key": {}}},
			skillSec: a2asdk.SecurityRequirementsOptions{{"oauth": {"admin"}}},
		},
		{
			name: "v1 a2a-go arrays",
			in: `{"name":"a","supportedInterfaces":[{"url":"h:1","protocolBinding":"GRPC","protocolVersion":"1.0"}],
			      "securityRequirements":[{"schemes":{"oauth":["read"]}}],"skills":[{"id":"s"}]}`,
			ifaces:   []*a2asdk.AgentInterface{{URL: "h:1", ProtocolBinding: "GRPC", ProtocolVersion: "1.0"}},
			security: a2asdk.SecurityRequirementsOptions{{"oauth": {"read"}}},
		},
		{
			name: "v0.3 card",
			in: `{"name":"a","protocolVersion":"0.3.0","url":"http://a/rpc","preferredTransport":"JSONRPC",
			      "additionalInterfaces":[{"url":"http://a/rpc","transport":"JSONRPC"},{"url":"http://a/rest","transport":"HTTP+JSON"}],
			      "capabilities":{"streaming":true},"supportsAuthenticatedExtendedCard":true,
			      "securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}},"security":[{"bearer":["x"]}],
			      "skills":[{"id":"s","security":[{"bearer":["y"]}]}]}`,
			ifaces: []*a2asdk.AgentInterface{
				{URL: "http://a/rpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3.0"},
				{URL: "http://a/rest", ProtocolBinding: "HTTP+JSON", ProtocolVersion: "0.3.0"},
			},
			security:   a2asdk.SecurityRequirementsOptions{{"bearer": {"x"}}},
			skillSec:   a2asdk.SecurityRequirementsOptions{{"bearer": {"y"}}},
			streaming:  true,
			extendedOK: true,
		},
		{
			name: "union card prefers supportedInterfaces",
			in: `{"name":"a","protocolVersion":"0.3","url":"http://a/v03","preferredTransport":"JSONRPC",
			      "supportedInterfaces":[{"url":"http://a/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
			                             {"url":"http://a/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
			      "securityRequirements":[{"schemes":{"b":{"list":[]}}}],"security":[{"b":[]}]}`,
			ifaces: []*a2asdk.AgentInterface{
				{URL: "http://a/v1", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
				{URL: "http://a/v03", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
			},
			security: a2asdk.SecurityRequirementsOptions{{"b": {}}},
		},
		{
			name:   "null interfaces are dropped",
			in:     `{"name":"a","supportedInterfaces":[null,{"url":"u","protocolBinding":"JSONRPC","protocolVersion":"1.0"},null]}`,
			ifaces: []*a2asdk.AgentInterface{{URL: "u", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			card, err := ParseCard([]byte(tc.in))
			if err != nil {
				t.Fatalf("ParseCard: %v", err)
			}
			if diff := cmp.Diff(tc.ifaces, card.SupportedInterfaces); diff != "" {
				t.Errorf("interfaces (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.security, card.SecurityRequirements, cmpEmptyNil); diff != "" {
				t.Errorf("securityRequirements (-want +got):\n%s", diff)
			}
			var skillSec a2asdk.SecurityRequirementsOptions
			if len(card.Skills) > 0 {
				skillSec = card.Skills[0].SecurityRequirements
			}
			if diff := cmp.Diff(tc.skillSec, skillSec, cmpEmptyNil); diff != "" {
				t.Errorf("skill securityRequirements (-want +got):\n%s", diff)
			}
			if card.Capabilities.Streaming != tc.streaming || card.Capabilities.ExtendedAgentCard != tc.extendedOK {
				t.Errorf("capabilities = %+v", card.Capabilities)
			}
		})
	}
}

var cmpEmptyNil = cmp.FilterValues(func(a, b a2asdk.SecurityRequirementsOptions) bool {
	return len(a) == 0 && len(b) == 0
}, cmp.Ignore())

func TestParseCardErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{`, `<html>`, `{"supportedInterfaces":{}}`, `{"securityRequirements":[{"schemes":{"a":{"list":"x"}}}]}`} {
		if _, err := ParseCard([]byte(in)); err == nil {
			t.Errorf("ParseCard(%q) = nil error", in)
		}
	}
}

func TestFixSecurityListsLeavesOtherCardsAlone(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"name":"a","securityRequirements":[{"schemes":{"b":["x"]}}]}`,
		`{"name":"a"}`,
		`[1,2]`,
		`null`,
		`{"securityRequirements":"weird","skills":7}`,
	} {
		if got := string(fixSecurityLists([]byte(in))); got != in {
			t.Errorf("fixSecurityLists(%s) = %s, want unchanged", in, got)
		}
	}
}

// FuzzParseCard feeds arbitrary bytes to the tolerant parser: it must never
// panic, and when the input is JSON the rewrite must still be JSON.
func FuzzParseCard(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","securityRequirements":[{"schemes":{"b":{"list":["x"]}}}],"skills":[{"securityRequirements":[{"schemes":{"c":{}}}]}]}`,
		`{"protocolVersion":"0.3","url":"u","preferredTransport":"JSONRPC","security":[{"b":[]}],"securitySchemes":{"b":{"type":"http","scheme":"bearer"}}}`,
		`{"supportedInterfaces":[null,{"url":"u","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`,
		`{"securitySchemes":{"o":{"type":"oauth2","flows":{"implicit":{"authorizationUrl":"x","scopes":{}}}}}}`,
		`{"securityRequirements":[null,{"schemes":null},{"schemes":{"a":{"list":null}}}],"skills":[null]}`,
		`null`, `[]`, `"x"`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fixed := fixSecurityLists(b)
		if json.Valid(b) && !json.Valid(fixed) {
			t.Fatalf("rewrite broke JSON: %s -> %s", b, fixed)
		}
		card, err := ParseCard(b)
		if err == nil {
			for _, i := range card.SupportedInterfaces {
				if i == nil {
					t.Fatal("nil interface survived ParseCard")
				}
			}
		}
	})
}
