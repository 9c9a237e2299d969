// wallMicros: the Unix time in microseconds, on the system's wall clock,
// with sub-millisecond resolution. The JS agent stamps chunks with it and
// the HttpAgent reader reads them with it; the Go side of cmd/bridge-bench
// uses time.Now().UnixMicro(), the same wall clock.
//
// Neither Node clock will do alone. performance.timeOrigin +
// performance.now() has the resolution, but it is anchored once, at process
// start, and then runs on the monotonic clock: while the wall clock is being
// slewed (NTP on this VM) the two drift apart, and a reader that had run for
// a few minutes saw chunks arrive 23 ms before a Go agent wrote them.
// Date.now() follows the wall clock, in whole milliseconds. So this is the
// monotonic time plus its offset to the wall clock, estimated on every call:
// Date.now() − performance.now() is the offset less the fraction of a
// millisecond Date.now() dropped, so the largest value over the last one to
// two seconds of calls is the offset to within a few microseconds when calls
// are frequent (one per chunk), and follows a slewing clock within that
// window.

let window = -1;
let best = -Infinity;
let previousBest = -Infinity;

export function wallMicros() {
  const mono = performance.now();
  const offset = Date.now() - mono;
  const w = Math.floor(mono / 1000);
  if (w !== window) {
    previousBest = w === window + 1 ? best : -Infinity;
    best = -Infinity;
    window = w;
  }
  if (offset > best) best = offset;
  return Math.round((mono + Math.max(best, previousBest)) * 1000);
}
