package operatorcatalog

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
)

// answering is discovery that fails until answers is set.
type answering struct {
	discovery.DiscoveryInterface
	answers atomic.Bool
	asked   atomic.Int32
}

func (a *answering) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	a.asked.Add(1)
	if !a.answers.Load() {
		return nil, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	}
	return &metav1.APIResourceList{GroupVersion: gv}, nil
}

// An outage starts with an answer that says the API is not available
// (no other error), wakes every catalog once, and ends when discovery
// answers again, asked with backoff from then on only; its end wakes them
// again.
func TestServed(t *testing.T) {
	t.Parallel()
	d := &answering{}
	s := NewServed(d)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _ = s.Start(ctx) }()
	for _, err := range []error{apierrors.NewConflict(metav1.SchemeGroupVersion.WithResource("packages").GroupResource(), "p", errors.New("changed")), apierrors.NewBadRequest("no")} {
		if s.Failed(ctx, err) || s.Down() != "" {
			t.Fatalf("%v started an outage", err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := d.asked.Load(); n != 0 {
		t.Fatalf("discovery asked %d times while the API answers", n)
	}
	if !s.Failed(ctx, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")) || s.Down() == "" {
		t.Fatal("a 503 is an outage")
	}
	s.Failed(ctx, apierrors.NewServiceUnavailable("again"))
	select {
	case <-s.Changes():
	case <-ctx.Done():
		t.Fatal("the outage woke no catalog")
	}
	for d.asked.Load() < 2 {
		select {
		case <-ctx.Done():
			t.Fatal("discovery not asked during the outage")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if s.Down() == "" {
		t.Fatal("the outage ended while discovery failed")
	}
	d.answers.Store(true)
	select {
	case <-s.Changes():
	case <-ctx.Done():
		t.Fatal("the end of the outage woke no catalog")
	}
	if s.Down() != "" {
		t.Errorf("still down after discovery answered: %q", s.Down())
	}
}
