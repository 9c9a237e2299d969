package main

import (
	"strconv"
	"testing"
	"time"
)

// FuzzChunkStamp: the stamp finder reads whatever a target sends (any SSE
// data payload); it must not panic, and it must find a stamp the agents
// wrote in any surrounding text.
func FuzzChunkStamp(f *testing.F) {
	f.Add([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"w3@1796351071549847 "}`), int64(1796351071549847))
	f.Add([]byte("w@@w1@"), int64(0))
	f.Add([]byte("w99999999999999999999@99999999999999999999999"), int64(1))
	f.Fuzz(func(t *testing.T, data []byte, us int64) {
		chunkStamp(data) // anything goes, as long as it returns
		if us < 0 {
			return
		}
		stamped := stampChunk("w"+strconv.Itoa(len(data))+" ", time.UnixMicro(us))
		if got, ok := chunkStamp([]byte(stamped)); !ok || got != us {
			t.Fatalf("chunkStamp(%q) = %d, %v; want %d", stamped, got, ok, us)
		}
	})
}

// FuzzClassifyA2A: the relay's stream is classified from raw agent JSON.
func FuzzClassifyA2A(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"artifactUpdate":{"artifact":{"parts":[{"text":"w0@1 "}]}}}}`))
	f.Add([]byte(`{"result":{"statusUpdate":{"status":{"state":"TASK_STATE_COMPLETED"}}}}`))
	f.Add([]byte(`{"error":{"code":1,"message":"x"}}`))
	f.Add([]byte(`{"result":{"statusUpdate":null,"artifactUpdate":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		class, desc, err := classifyA2A(data)
		if err != nil && class != classOther {
			t.Fatalf("error %v with class %v", err, class)
		}
		if (class == classError) != (desc != "") {
			t.Fatalf("class %v with description %q", class, desc)
		}
	})
}
