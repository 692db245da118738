package fetch

import (
	"errors"
	"sync"
	"time"
)

// Every fetch the adapter retries waits RetryBase after its first failure,
// twice as long after each further one, and at most RetryMax (in line with
// kapp-controller's own retry cap): six attempts in the first minute (at
// 0, 1, 3, 7, 15 and 31 s), then, once the wait has grown, one every five
// minutes.
const (
	RetryBase = time.Second
	RetryMax  = 5 * time.Minute
)

// RetryDelay is how long to wait after the n-th failure in a row (n ≥ 1).
func RetryDelay(n int) time.Duration { return Doubling(RetryBase, RetryMax, n) }

// Doubling is the n-th wait (n ≥ 1) of a backoff that starts at first and
// doubles up to most.
func Doubling(first, most time.Duration, n int) time.Duration {
	d := first
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

// RetryLater is a failed fetch that is tried again at Next, and not before.
// Remembered says no fetch was made for it: it is the failure of an earlier
// attempt, whose backoff has not passed.
type RetryLater struct {
	Err        error
	Next       time.Time
	Remembered bool
}

func (e *RetryLater) Error() string { return e.Err.Error() }
func (e *RetryLater) Unwrap() error { return e.Err }

// NextAttempt is when err's fetch is tried again; zero when err says
// nothing of it.
func NextAttempt(err error) time.Time {
	var later *RetryLater
	if errors.As(err, &later) {
		return later.Next
	}
	return time.Time{}
}

// Backoff remembers, per object, the last failed fetch of what it reads
// (its input: a generation, a source), so that no event (a status write's
// echo, a watch, a fetch that ended) fetches it again before its backoff has
// passed: a reconcile in between reports the failure it remembers. A new
// input starts afresh. Its zero value remembers nothing; it is safe for
// concurrent use.
type Backoff struct {
	mu     sync.Mutex
	failed map[string]failure
}

type failure struct {
	input    string
	err      error
	attempts int
	// next is when the fetch may run again; zero: not until the input
	// changes or the failure is forgotten (a permanent failure).
	next time.Time
}

// Pending returns the failure remembered for key at input while its next
// attempt has not come (as a *RetryLater marked Remembered, or the
// permanent error as it was): the caller reports it and fetches nothing.
// nil: fetch now.
func (b *Backoff) Pending(key, input string, now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.failed[key]
	switch {
	case !ok || f.input != input:
		return nil
	case f.next.IsZero():
		return f.err
	case now.Before(f.next):
		return &RetryLater{Err: f.err, Next: f.next, Remembered: true}
	}
	return nil
}

// Failed remembers that key's fetch of input failed now with err. A
// failure a retry can end comes back as a *RetryLater naming its next
// attempt, one backoff step later than the last; a permanent one (retry
// false) is remembered until the input changes or Forget, and comes back
// as it is.
func (b *Backoff) Failed(key, input string, err error, retry bool, now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed == nil {
		b.failed = map[string]failure{}
	}
	f := b.failed[key]
	if f.input != input {
		f = failure{input: input}
	}
	f.attempts++
	f.err, f.next = err, time.Time{}
	if !retry {
		b.failed[key] = f
		return err
	}
	f.next = now.Add(RetryDelay(f.attempts))
	b.failed[key] = f
	return &RetryLater{Err: err, Next: f.next}
}

// Forget drops what is remembered of key: its fetch succeeded, it is gone,
// or what it reads changed (a Secret, a ConfigMap), and the next reconcile
// fetches at once.
func (b *Backoff) Forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.failed, key)
}

// ForgetAll drops every failure: what every fetch depends on changed
// (kapp-controller-config's CAs or proxies).
func (b *Backoff) ForgetAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed = nil
}
