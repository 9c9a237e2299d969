// Package jsonrpcstream is the bridge's reader of A2A JSON-RPC streams
// (SendStreamingMessage, SubscribeToTask): a2a-go's JSON-RPC transport with
// its two streaming methods replaced by a small SSE line reader and a
// single-pass decoder (decodeStreamEvent), which falls back to the SDK's
// decoding for any payload it declines. Tests check it against the SDK on
// every sample payload and under fuzzing.
//
// It shadows SDK code for speed only (measured with bridge-bench, see
// streamingJSONRPC), so it is internal to package a2a and meant to go.
// Delete it, and use a2aclient.NewJSONRPCTransport in a2a/agent.go, once
// a2a-go takes the two fixes it stands for, which are to be offered
// upstream:
//
//  1. decode each SSE payload once: the SDK's JSON-RPC stream unmarshals
//     every payload twice with encoding/json, which dominated the bridge's
//     CPU per streamed chunk;
//  2. size the SSE scanner's buffer to the line rather than allocating 64
//     KiB per stream, most of the memory of an open stream to a slow agent.
package jsonrpcstream

import (
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// New returns the JSON-RPC transport for the agent interface at url, with
// the fast stream reader; unary calls are the SDK's.
func New(url string, client *http.Client) a2aclient.Transport {
	return newStreamingJSONRPC(url, client)
}
