package limits

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// Error codes.
const (
	// CodeRateLimited: the principal sent requests faster than its rate.
	CodeRateLimited = agui.CodeRateLimited
	// CodeTooManyRuns: the principal has as many runs in progress as it
	// may.
	CodeTooManyRuns = agui.CodeTooManyRuns
	// CodeOverloaded: the instance has as many runs in progress as it may.
	CodeOverloaded = agui.CodeOverloaded
)

// Error is a refused admission.
type Error struct {
	Code    string
	Message string
	// Retry is how long to wait before trying again.
	Retry time.Duration
}

func (e *Error) Error() string { return e.Message }

// HTTPStatus is the status to answer with: 429 or 503 (agui's table).
func (e *Error) HTTPStatus() int { return agui.HTTPStatus(e.Code) }

// ErrorCode is the stable error code.
func (e *Error) ErrorCode() string { return e.Code }

// PublicMessage is safe to show the caller.
func (e *Error) PublicMessage() string { return e.Message }

// RetryAfter is the wait the Retry-After header announces.
func (e *Error) RetryAfter() time.Duration { return e.Retry }

// Options configure a Limiter; zero values disable each limit.
type Options struct {
	// RequestsPerSecond and Burst make a token bucket per principal.
	// Burst 0 means the rate rounded up (at least 1).
	RequestsPerSecond float64
	Burst             int
	// RunsPerPrincipal caps each principal's runs in progress.
	RunsPerPrincipal int
	// Runs caps the instance's runs in progress.
	Runs int
}

// runRetry is the Retry-After of a refused run: runs have no predictable
// end, so the caller is told to come back soon rather than a made-up time.
const runRetry = time.Second

// idleEvict is how long an unused principal's bucket is kept.
const idleEvict = 10 * time.Minute

// Limiter is safe for concurrent use.
type Limiter struct {
	opt Options

	mu      sync.Mutex
	buckets map[string]*bucket
	calls   int
	runs    map[string]int
	total   int
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// New returns a Limiter.
func New(opt Options) *Limiter {
	return &Limiter{opt: withBurst(opt), buckets: map[string]*bucket{}, runs: map[string]int{}}
}

func withBurst(opt Options) Options {
	if opt.RequestsPerSecond > 0 && opt.Burst <= 0 {
		opt.Burst = max(1, int(math.Ceil(opt.RequestsPerSecond)))
	}
	return opt
}

// SetOptions changes the limits (a config reload). Runs in progress stay
// counted against the new caps; buckets start full at the new rate.
func (l *Limiter) SetOptions(opt Options) {
	l.mu.Lock()
	defer l.mu.Unlock()
	opt = withBurst(opt)
	if opt.RequestsPerSecond != l.opt.RequestsPerSecond || opt.Burst != l.opt.Burst {
		l.buckets = map[string]*bucket{}
	}
	l.opt = opt
}

// Allow takes one request of principal from its bucket, or refuses with
// 429 rate_limited and the time until a token is available.
func (l *Limiter) Allow(principal string) error {
	if l == nil {
		return nil
	}
	now := time.Now()
	l.mu.Lock()
	if l.opt.RequestsPerSecond <= 0 {
		l.mu.Unlock()
		return nil
	}
	b := l.buckets[principal]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.opt.RequestsPerSecond), l.opt.Burst)}
		l.buckets[principal] = b
	}
	b.last = now
	l.calls++
	if l.calls%1024 == 0 {
		for p, e := range l.buckets {
			if now.Sub(e.last) > idleEvict {
				delete(l.buckets, p)
			}
		}
	}
	l.mu.Unlock()
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now) // the request is refused: it must not use the token
		return &Error{Code: CodeRateLimited,
			Message: "too many requests; retry after the time in Retry-After", Retry: d}
	}
	return nil
}

// AcquireRun counts a run of principal, or refuses: 503 bridge_overloaded
// when the instance is full, 429 too_many_runs when the principal is.
// release (idempotent) ends the count.
func (l *Limiter) AcquireRun(principal string) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opt.Runs > 0 && l.total >= l.opt.Runs {
		return nil, &Error{Code: CodeOverloaded,
			Message: "the bridge has as many runs in progress as it may; retry later", Retry: runRetry}
	}
	if l.opt.RunsPerPrincipal > 0 && l.runs[principal] >= l.opt.RunsPerPrincipal {
		return nil, &Error{Code: CodeTooManyRuns,
			Message: "you have as many runs in progress as you may; wait for one to finish", Retry: runRetry}
	}
	l.total++
	l.runs[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if l.runs[principal]--; l.runs[principal] <= 0 {
				delete(l.runs, principal)
			}
		})
	}, nil
}
