// Package a2a is everything A2A in the bridge: it resolves an agent's card,
// builds one a2a-go v2 client per agent over the binding the card offers
// (JSON-RPC, HTTP+JSON or gRPC, at protocol 1.0 or, through the SDK's
// compat layer, 0.3), and exposes the calls the run orchestrator needs
// as plain methods and iter.Seq2 streams. The rest of the bridge sees A2A
// types only through the aliases declared here and never imports the SDK's
// client packages.
//
// The package works around a2a-go (v2.4.0) where it has to, each site citing
// the pitfall from docs/A2A-PROTOCOL.md §10: cards with ProtoJSON
// {"list":[...]} scopes (P1) go through a tolerant parser, the HTTP client has
// no overall timeout (P2), and REST responses are repaired before the SDK
// decodes them (P4). v2.4.0 fixed the v0.3 HTTP+JSON wire (P10, a2a-go #371),
// so v0.3 peers are reached over every binding.
//
// # Errors
//
// Every error from Dial and from Agent methods is an *Error. Callers use
// errors.Is with the sentinels declared here (the A2A ones are the SDK's own
// values, re-exported) and Classify to turn an error into a stable code and
// HTTP status. Classify checks the rows below top to bottom and never looks
// at error text.
//
//	code                              HTTP  when
//	a2a_canceled                      499   the caller's context was canceled
//	a2a_timeout                       504   context deadline exceeded (ours or the agent's DEADLINE_EXCEEDED)
//	a2a_invalid_options               500   ErrInvalidOptions: bad Options, nil message
//	a2a_card_unavailable              502   ErrCardUnavailable: card fetch failed (network, non-200, parse)
//	a2a_no_transport                  502   ErrNoTransport: no interface in the card we can speak
//	a2a_task_not_found                404   ErrTaskNotFound
//	a2a_task_not_cancelable           409   ErrTaskNotCancelable
//	a2a_unsupported_operation         501   ErrUnsupportedOperation
//	a2a_push_not_supported            501   ErrPushNotificationNotSupported
//	a2a_extended_card_not_configured  501   ErrExtendedCardNotConfigured
//	a2a_content_type_not_supported    415   ErrContentTypeNotSupported
//	a2a_invalid_params                400   ErrInvalidParams
//	a2a_unauthenticated               401   ErrUnauthenticated, or HTTP 401 from the agent
//	a2a_unauthorized                  403   ErrUnauthorized, or HTTP 403 from the agent
//	a2a_version_not_supported         502   ErrVersionNotSupported
//	a2a_extension_required            502   ErrExtensionSupportRequired
//	a2a_protocol_error                502   ErrParseError, ErrInvalidRequest, ErrMethodNotFound
//	a2a_invalid_agent_response        502   ErrInvalidAgentResponse, or a reply that is not valid JSON
//	a2a_internal                      502   ErrInternalError, ErrServerError
//	bridge_overloaded                 503   ErrOutOfDescriptors: the bridge could not open a connection (EMFILE)
//	a2a_card_untrusted                502   ErrCardUntrusted: interface off the agent's host, card too large,
//	                                        redirect to another host, missing or bad signature
//	a2a_unavailable                   502   ErrUnavailable: dial/DNS/TLS/reset, gRPC UNAVAILABLE, other HTTP
//	                                        statuses (503 when the agent answered 503 or 429)
//	a2a_error                         502   anything else
//
// The codes and their statuses are package errcode's, the bridge's one
// table of public codes; Classify only decides which applies. Status codes
// follow the bridge's own contract: 4xx when the caller's
// request is at fault (or the task state forbids it), 502/503/504 when the
// agent or the bridge-to-agent link is.
//
// # Observability
//
// With Options.Tracer every call (and Dial's card fetch) is a client span,
// a child of the span in the call's context; with Options.Propagator the
// call carries its W3C trace context to the agent through a call
// interceptor, as service parameters every binding sends (HTTP headers,
// gRPC metadata). Options.Observer hears how each call ended, as the
// stable code of the table above.
//
// # Credentials and trust
//
// Options.Credentials give secrets; the card says where they go (its
// securitySchemes and securityRequirements, the first alternative the
// credentials can meet): a bearer token, an API key in a header, query
// parameter or cookie, OAuth2 client-credentials tokens (cached, replaced
// 30 s before expiry), or the caller's own Authorization
// (WithCallerAuthorization) when ForwardCallerToken is set. They are added
// on calls only, by call interceptors (a query key by a RoundTripper that
// works on a clone, so errors quote the URL without it).
//
// The card is network data, so it is held to Options: its size
// (MaxCardBytes), its interfaces and OAuth2 token URL (the origin of URL
// and CardURL, gRPC on any port of that host, or AllowHosts), redirects
// (same rule), and, with TrustedKeys, its signature (VerifyCard). A refused
// card is ErrCardUntrusted with a *TrustError saying why.
//
// # Concurrency
//
// An *Agent is safe for concurrent use; each stream belongs to the goroutine
// ranging over it. Contexts carry every deadline: stopping a stream (break or
// context cancel) never cancels the remote task; CancelTask does.
package a2a
