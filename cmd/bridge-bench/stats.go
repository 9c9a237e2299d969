package main

import (
	"math"
	"slices"
	"time"
)

// median returns the middle value of ds (the mean of the two middle values
// for an even count), or 0 for none. ds is not modified.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// perChunk divides a duration among n chunks, in microseconds; 0 for no chunks.
func perChunk(d time.Duration, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return float64(d) / float64(time.Microsecond) / float64(n)
}

// ratio is a/b, or 0 when b is 0 (a missing measurement, not an infinity).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the p-th percentile (0 < p ≤ 100) of xs by the
// nearest-rank method: the smallest value that at least p % of the values
// do not exceed. 0 for none; xs is not modified.
func percentile(xs []int64, p float64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}
