// Package auth authenticates the callers of the bridge: static API keys
// (kept as SHA-256 digests, compared in constant time) and JWTs verified
// against a JWKS (a file or an https URL, cached and refreshed). It turns a
// bearer token into a principal name and knows nothing of routes, agents or
// threads; the HTTP layer decides what a principal may do.
//
// The principal travels with a request in its context ([WithPrincipal],
// [PrincipalFrom]), so that the layers below (the run service, which
// records who owns a thread) need not know how it was established.
package auth
