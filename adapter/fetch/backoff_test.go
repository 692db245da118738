package fetch

import (
	"errors"
	"testing"
	"time"
)

func TestRetryDelay(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 9: 256 * time.Second, 10: RetryMax, 100: RetryMax} {
		if got := RetryDelay(n); got != want {
			t.Errorf("RetryDelay(%d) = %s, want %s", n, got, want)
		}
	}
}

// The attempts a failing fetch makes in its first minute when every
// reconcile asks as soon as it may: the schedule the hot-loop guards of the
// suites bound (test/reconciler/hotloop_test.go).
func TestBackoffAttemptsInAMinute(t *testing.T) {
	var b Backoff
	start := time.Unix(1_000_000, 0)
	attempts := 0
	for now := start; now.Before(start.Add(time.Minute)); now = now.Add(100 * time.Millisecond) {
		if b.Pending("k", "gen-1", now) != nil {
			continue
		}
		attempts++
		b.Failed("k", "gen-1", errors.New("MANIFEST_UNKNOWN"), true, now)
	}
	if attempts != 6 {
		t.Errorf("%d attempts in a minute, want 6 (at 0, 1, 3, 7, 15 and 31 s)", attempts)
	}
}

func TestBackoff(t *testing.T) {
	cause := errors.New("unexpected status \"404 Not Found\"")
	now := time.Unix(1_000_000, 0)
	var b Backoff

	if err := b.Pending("k", "gen-1", now); err != nil {
		t.Fatalf("nothing failed yet, but Pending = %v", err)
	}
	err := b.Failed("k", "gen-1", cause, true, now)
	var later *RetryLater
	if !errors.As(err, &later) || later.Remembered || !later.Next.Equal(now.Add(time.Second)) || !errors.Is(err, cause) {
		t.Fatalf("first failure = %#v, want a fresh retry one second later wrapping the cause", err)
	}
	if err.Error() != cause.Error() {
		t.Errorf("the message is the cause's: %q", err.Error())
	}

	steps := []struct {
		name    string
		key     string
		input   string
		at      time.Duration
		pending bool
	}{
		{"within the backoff", "k", "gen-1", 500 * time.Millisecond, true},
		{"another object", "other", "gen-1", 500 * time.Millisecond, false},
		{"a new input starts afresh", "k", "gen-2", 500 * time.Millisecond, false},
		{"the backoff passed", "k", "gen-1", time.Second, false},
	}
	for _, s := range steps {
		err := b.Pending(s.key, s.input, now.Add(s.at))
		if (err != nil) != s.pending {
			t.Errorf("%s: Pending = %v, want pending %v", s.name, err, s.pending)
		}
		if err != nil && (!errors.As(err, &later) || !later.Remembered || !NextAttempt(err).Equal(now.Add(time.Second))) {
			t.Errorf("%s: %#v is not the remembered failure with its next attempt", s.name, err)
		}
	}

	// The second failure waits twice as long.
	second := now.Add(time.Second)
	if next := NextAttempt(b.Failed("k", "gen-1", cause, true, second)); !next.Equal(second.Add(2 * time.Second)) {
		t.Errorf("second failure's next attempt %s, want two seconds later", next)
	}
	// A new input counts from one again.
	if next := NextAttempt(b.Failed("k", "gen-2", cause, true, second)); !next.Equal(second.Add(time.Second)) {
		t.Errorf("a new input's first failure retries at %s, want one second later", next)
	}

	// A permanent failure is remembered until its input changes or it is
	// forgotten, and comes back as it was.
	refused := errors.New("invalid bundle")
	if err := b.Failed("p", "gen-1", refused, false, now); err != refused {
		t.Errorf("a permanent failure comes back as it is, got %v", err)
	}
	if err := b.Pending("p", "gen-1", now.Add(time.Hour)); err != refused {
		t.Errorf("a permanent failure an hour later: Pending = %v, want it remembered", err)
	}
	if NextAttempt(refused) != (time.Time{}) {
		t.Error("a permanent failure names no next attempt")
	}
	b.Forget("p")
	if err := b.Pending("p", "gen-1", now.Add(time.Hour)); err != nil {
		t.Errorf("forgotten, Pending = %v", err)
	}
	b.ForgetAll()
	if err := b.Pending("k", "gen-2", second); err != nil {
		t.Errorf("after ForgetAll, Pending = %v", err)
	}
}
