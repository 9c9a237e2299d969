// Command threadload posts many tiny runs on distinct threads, or deletes
// them, against a running bridge: issue 34's 20,000-thread measurement of
// the store file and RSS (BENCHMARKS.md, "Threads: 20,000 of them"). Each
// run's SSE stream is read to its end; the report counts statuses and the
// runs that ended with RUN_FINISHED or RUN_ERROR.
//
//	threadload -mode run -n 20000 -c 8 -prefix a
//	threadload -mode delete -n 10000 -start 0 -step 2 -c 8 -prefix a
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:18080", "bridge base URL")
	agent := flag.String("agent", "replier", "agent")
	mode := flag.String("mode", "run", "run | delete")
	n := flag.Int("n", 20000, "requests")
	start := flag.Int("start", 0, "first index")
	step := flag.Int("step", 1, "index step")
	c := flag.Int("c", 8, "concurrency")
	prefix := flag.String("prefix", "t", "thread id prefix")
	flag.Parse()

	tr := &http.Transport{MaxIdleConnsPerHost: *c * 2, MaxIdleConns: *c * 2}
	cl := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	next := int64(-1)
	var mu sync.Mutex
	status := map[string]int{}
	bodies := map[string]string{}
	var finished, runErr int64
	var wg sync.WaitGroup
	t0 := time.Now()
	for range *c {
		wg.Go(func() {
			for {
				i := atomic.AddInt64(&next, 1)
				if i >= int64(*n) {
					return
				}
				idx := *start + int(i)*(*step)
				tid := fmt.Sprintf("%s-%06d", *prefix, idx)
				var req *http.Request
				if *mode == "run" {
					body := fmt.Sprintf(`{"threadId":%q,"runId":"r-%d","messages":[{"id":"u1","role":"user","content":"hi"}],"state":{},"tools":[],"context":[],"forwardedProps":{}}`, tid, idx)
					req, _ = http.NewRequest("POST", *base+"/agents/"+*agent, bytes.NewBufferString(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "text/event-stream")
				} else {
					req, _ = http.NewRequest("DELETE", *base+"/agents/"+*agent+"/threads/"+tid, nil)
				}
				resp, err := cl.Do(req)
				key := ""
				var b []byte
				if err != nil {
					key = "err:" + err.Error()
					if len(key) > 80 {
						key = key[:80]
					}
				} else {
					b, _ = io.ReadAll(resp.Body)
					resp.Body.Close()
					key = fmt.Sprint(resp.StatusCode)
					if resp.StatusCode == 200 && *mode == "run" {
						s := string(b)
						if strings.Contains(s, `"RUN_FINISHED"`) {
							atomic.AddInt64(&finished, 1)
						}
						if strings.Contains(s, `"RUN_ERROR"`) {
							atomic.AddInt64(&runErr, 1)
						}
					}
				}
				mu.Lock()
				status[key]++
				if _, ok := bodies[key]; !ok && key != "200" && key != "204" {
					s := string(b)
					if len(s) > 300 {
						s = s[:300]
					}
					bodies[key] = s
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	keys := []string{}
	for k := range status {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("mode=%s n=%d elapsed=%.2fs rate=%.1f/s\n", *mode, *n, el.Seconds(), float64(*n)/el.Seconds())
	for _, k := range keys {
		fmt.Printf("  status %s: %d\n", k, status[k])
	}
	if *mode == "run" {
		fmt.Printf("  200 bodies with RUN_FINISHED: %d, with RUN_ERROR: %d\n", finished, runErr)
	}
	for k, v := range bodies {
		fmt.Printf("  sample body for %s: %s\n", k, v)
	}
}
