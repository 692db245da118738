package bundledeployment

import (
	"errors"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
)

func TestDecidePolicy(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	retrying := &status.Failure{Retrying: true}
	final := &status.Failure{}
	now := time.Unix(1_000_000, 0)
	backoff := &status.Failure{Retrying: true, NextAttempt: now.Add(4 * time.Second)}
	type want struct {
		write    bool
		after    time.Duration
		err      bool
		terminal bool
	}
	for _, tt := range []struct {
		name    string
		p       policy
		out     status.Computed
		o       scope.Outcome
		failure *status.Failure
		want    want
	}{
		{"install: written, no timer", installing, status.Computed{}, scope.Outcome{}, nil, want{write: true}},
		{"install: content timer", installing, status.Computed{}, scope.Outcome{Timer: time.Minute}, nil, want{write: true, after: time.Minute}},
		{"install: the sooner of content and status timers", installing, status.Computed{LookAgainAfter: 10 * time.Second}, scope.Outcome{Timer: time.Minute}, nil, want{write: true, after: 10 * time.Second}},
		{"install: progress held, looked at when the hold ends", installing, status.Computed{Hold: true, WriteAfter: 3 * time.Second}, scope.Outcome{Timer: time.Minute}, nil, want{after: 3 * time.Second}},
		{"install: held, a sooner timer wins", installing, status.Computed{Hold: true, WriteAfter: 3 * time.Second, LookAgainAfter: time.Second}, scope.Outcome{}, nil, want{after: time.Second}},
		{"install: a failure a retry can fix is retried with backoff", installing, status.Computed{}, scope.Outcome{Err: boom, Timer: time.Minute}, retrying, want{write: true, err: true}},
		{"install: a fetch that failed is looked at again at its next attempt, not as an error", installing, status.Computed{}, scope.Outcome{Err: boom, Timer: time.Minute}, backoff, want{write: true, after: 4 * time.Second}},
		{"install: a failure only a new spec fixes is terminal", installing, status.Computed{}, scope.Outcome{Err: boom}, final, want{write: true, err: true, terminal: true}},
		{"install: a failure alongside a working install is retried", installing, status.Computed{}, scope.Outcome{Retry: boom, Timer: time.Minute}, nil, want{write: true, err: true}},
		{"removal: written", removing, status.Computed{}, scope.Outcome{}, nil, want{write: true}},
		{"removal: never held", removing, status.Computed{Hold: true, WriteAfter: time.Second}, scope.Outcome{}, nil, want{write: true}},
		{"removal: a failure is retried, never terminal, not written", removing, status.Computed{}, scope.Outcome{Err: boom}, final, want{err: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := decide(tt.p, tt.out, tt.o, tt.failure, now)
			if d.write != tt.want.write || d.result != (ctrl.Result{RequeueAfter: tt.want.after}) || (d.err != nil) != tt.want.err ||
				errors.Is(d.err, reconcile.TerminalError(nil)) != tt.want.terminal {
				t.Errorf("decide = %+v, want %+v", d, tt.want)
			}
			if d.err != nil && !errors.Is(d.err, boom) {
				t.Errorf("the error %v does not wrap the step's", d.err)
			}
		})
	}
}
