package drift

import (
	"testing"
	"time"
)

// TestFightSchedule runs a writer that changes the object back every
// second for an hour: the re-applies follow the documented schedule and
// stay bounded.
func TestFightSchedule(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var f fight
	var kicks []time.Duration
	for s := 0; s < 3600; s++ {
		now := t0.Add(time.Duration(s) * time.Second)
		if f.wait(now) == 0 {
			f.kicked(now)
			kicks = append(kicks, now.Sub(t0))
		}
	}
	want := []time.Duration{0, 5, 15, 35, 75, 155, 315, 615}
	for i, w := range want {
		if i >= len(kicks) || kicks[i] != w*time.Second {
			t.Fatalf("re-applies at %v, want them to start %v (seconds)", kicks, want)
		}
	}
	if len(kicks) > 19 {
		t.Errorf("%d re-applies in an hour of fighting, want at most 19: %v", len(kicks), kicks)
	}
	for i := len(want); i < len(kicks); i++ {
		if gap := kicks[i] - kicks[i-1]; gap != maxRetry {
			t.Errorf("re-apply %d came %s after the one before, want %s", i, gap, maxRetry)
		}
	}
}

func TestFightWait(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		kicks int
		since time.Duration // since the last re-apply
		want  time.Duration
		reset bool
	}{
		{"no re-apply yet", 0, 0, 0, false},
		{"one re-apply, 2 s ago", 1, 2 * time.Second, 3 * time.Second, false},
		{"one re-apply, 5 s ago", 1, 5 * time.Second, 0, false},
		{"third, 4 s after the second", 2, 4 * time.Second, 6 * time.Second, false},
		{"capped", 20, time.Minute, 4 * time.Minute, false},
		{"quiet for a minute past the wait: starts over", 3, 20*time.Second + quietAfter + time.Second, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := fight{kicks: tt.kicks, last: t0}
			if got := f.wait(t0.Add(tt.since)); got != tt.want {
				t.Errorf("wait = %s, want %s", got, tt.want)
			}
			if reset := f.kicks == 0 && tt.kicks > 0; reset != tt.reset {
				t.Errorf("reset = %v, want %v", reset, tt.reset)
			}
		})
	}
}
