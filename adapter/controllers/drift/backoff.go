package drift

import "time"

// The re-apply schedule for one App: the first re-apply after a quiet time
// goes at once; while changes keep coming (a controller that fights kapp
// over a field), each further re-apply waits twice as long as the one
// before, from firstRetry up to maxRetry. A fight therefore costs at most
// about seven re-applies in its first five minutes (at 0, 5, 15, 35, 75,
// 155 and 315 s) and then one every maxRetry, as well as the App's sync
// period; never a hot loop. The count starts over once no change came for
// quietAfter beyond the last wait.
const (
	firstRetry = 5 * time.Second
	maxRetry   = 5 * time.Minute
	quietAfter = time.Minute
)

// fight is one App's re-apply history.
type fight struct {
	kicks int
	last  time.Time
}

// delay is how long after the last re-apply the next may go.
func (f fight) delay() time.Duration {
	if f.kicks == 0 {
		return 0
	}
	d := firstRetry << (f.kicks - 1)
	if d > maxRetry || d <= 0 {
		d = maxRetry
	}
	return d
}

// wait is how long a re-apply asked for at now must wait; it forgets a
// fight that has gone quiet.
func (f *fight) wait(now time.Time) time.Duration {
	if f.kicks == 0 {
		return 0
	}
	d := f.delay()
	if now.Sub(f.last) > d+quietAfter {
		*f = fight{}
		return 0
	}
	return max(0, f.last.Add(d).Sub(now))
}

// kicked records a re-apply at now.
func (f *fight) kicked(now time.Time) {
	f.kicks++
	f.last = now
}
