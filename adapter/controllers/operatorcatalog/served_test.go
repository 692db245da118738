package operatorcatalog

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// answering is a packaging API that fails with 503 until answers is set,
// and that, hung, answers no probe at all.
type answering struct {
	answers, hung atomic.Bool
	asked         atomic.Int32
	mu            sync.Mutex
	at            []time.Time
}

func (a *answering) probe(ctx context.Context) error {
	a.asked.Add(1)
	a.mu.Lock()
	a.at = append(a.at, time.Now())
	a.mu.Unlock()
	if a.hung.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	if !a.answers.Load() {
		return apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	}
	return nil
}

func (a *answering) times() []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.at...)
}

func waitChange(t *testing.T, ctx context.Context, s *Served, what string) {
	t.Helper()
	select {
	case <-s.Changes():
	case <-ctx.Done():
		t.Fatalf("%s woke no catalog", what)
	}
}

// An outage starts with an answer that says the API is not available
// (no other error), wakes every catalog once, and ends when the probe
// answers again, made with backoff from then on only; its end wakes them
// again. With no catalog, nothing is asked.
func TestServed(t *testing.T) {
	t.Parallel()
	a := &answering{}
	s := NewServed(a.probe, func(context.Context) bool { return false })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _ = s.Start(ctx) }()
	for _, err := range []error{apierrors.NewConflict(metav1.SchemeGroupVersion.WithResource("packages").GroupResource(), "p", errors.New("changed")), apierrors.NewBadRequest("no")} {
		if s.Failed(ctx, err) || s.Down() != "" {
			t.Fatalf("%v started an outage", err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := a.asked.Load(); n != 0 {
		t.Fatalf("the API asked %d times while it answers", n)
	}
	if !s.Failed(ctx, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")) || s.Down() == "" {
		t.Fatal("a 503 is an outage")
	}
	s.Failed(ctx, apierrors.NewServiceUnavailable("again"))
	waitChange(t, ctx, s, "the outage")
	for a.asked.Load() < 2 {
		select {
		case <-ctx.Done():
			t.Fatal("the API not asked during the outage")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if s.Down() == "" {
		t.Fatal("the outage ended while the probe failed")
	}
	a.answers.Store(true)
	waitChange(t, ctx, s, "the end of the outage")
	if s.Down() != "" {
		t.Errorf("still down after the probe answered: %q", s.Down())
	}
}

// A hung API, which holds every request without answering, is an outage
// seen by the probe that runs while catalogs exist, within its period and
// ProbeTimeout; the condition says it did not answer.
func TestServed_HungIsAnOutage(t *testing.T) {
	t.Parallel()
	a := &answering{}
	a.hung.Store(true)
	s := NewServed(a.probe, func(context.Context) bool { return true })
	s.every = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), ProbeTimeout+10*time.Second)
	defer cancel()
	start := time.Now()
	go func() { _ = s.Start(ctx) }()
	waitChange(t, ctx, s, "a hung API")
	if took := time.Since(start); took > s.every+ProbeTimeout+2*time.Second {
		t.Errorf("the outage was seen after %s", took)
	}
	if !strings.Contains(s.Down(), "did not answer a probe within 5s") {
		t.Errorf("down %q, want the probe's timeout named", s.Down())
	}
}

// The backoff goes on across outages that follow each other within
// Stable (a probe that answers while writes fail), so that the loop of
// outage, end and failed write slows to one per the backoff's cap; after
// Stable without one it starts again at its first delay.
func TestServed_BackoffContinuesAcrossOutages(t *testing.T) {
	t.Parallel()
	a := &answering{}
	a.answers.Store(true)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	s := NewServed(a.probe, func(context.Context) bool { return false })
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	s.first, s.last = time.Millisecond, 20*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() { _ = s.Start(ctx) }()
	unavailable := apierrors.NewServiceUnavailable("writes fail")
	var delays []time.Duration
	for i := range 6 {
		s.Failed(ctx, unavailable)
		waitChange(t, ctx, s, "an outage")
		waitChange(t, ctx, s, "an outage's end")
		ts := a.times()
		if len(ts) != i+1 {
			t.Fatalf("%d probes after %d outages", len(ts), i+1)
		}
		s.mu.Lock()
		delays = append(delays, s.delay)
		s.mu.Unlock()
	}
	want := []time.Duration{2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, 16 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("next delays %v, want %v: the backoff restarted", delays, want)
		}
	}
	mu.Lock()
	clock = clock.Add(Stable)
	mu.Unlock()
	s.Failed(ctx, unavailable)
	s.mu.Lock()
	d := s.delay
	s.mu.Unlock()
	if d != s.first && d != 2*s.first {
		t.Errorf("after a stable spell the delay is %s, want %s again", d, s.first)
	}
}
