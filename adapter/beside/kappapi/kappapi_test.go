package kappapi

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// kappDiscovery serves the groups of kapp-controller's API that served
// lists, and fails every lookup with fail when it is set.
type kappDiscovery struct {
	mu     sync.Mutex
	served []string
	fail   error
	d      *fakediscovery.FakeDiscovery
}

func newKappDiscovery(served ...string) *kappDiscovery {
	k := &kappDiscovery{served: served, d: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}}
	k.d.AddReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.d.Resources = nil
		for _, gv := range k.served {
			k.d.Resources = append(k.d.Resources, &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: kappKinds[gv]}}})
		}
		return k.fail != nil, nil, k.fail
	})
	return k
}

func (k *kappDiscovery) serve(gv ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.served = gv
}

// opened counts the API's open and wake calls.
type opened struct{ open, wake int }

func kappAPIOver(d *kappDiscovery, o *opened) *API {
	return New(d.d, nil,
		func(context.Context) error { o.open++; return nil },
		func(context.Context) error { o.wake++; return nil })
}

const appsGV, packagingGV = "kappctrl.k14s.io/v1alpha1", "packaging.carvel.dev/v1alpha1"

func TestAPIOpensOnceEveryKindIsServed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newKappDiscovery()
	o := &opened{}
	k := kappAPIOver(d, o)

	if ok, err := k.OpenIfServed(ctx); ok || err != nil || k.Ready() || k.Check(nil) == nil {
		t.Fatalf("no API: OpenIfServed = %t, %v; Ready %t", ok, err, k.Ready())
	}
	d.serve(appsGV)
	if err := k.look(ctx); err != nil || k.Ready() || o.open != 0 {
		t.Fatalf("Apps without PackageInstalls: look %v, Ready %t, opened %d", err, k.Ready(), o.open)
	}
	d.serve(appsGV, packagingGV)
	if err := k.look(ctx); err != nil || !k.Ready() || k.Check(nil) != nil {
		t.Fatalf("both kinds: look %v, Ready %t, Check %v", err, k.Ready(), k.Check(nil))
	}
	if err := k.look(ctx); err != nil {
		t.Fatal(err)
	}
	if *o != (opened{open: 1, wake: 1}) {
		t.Errorf("opened %+v after two looks at a served API; want one open and one wake", *o)
	}
}

func TestAPIServedAtStartOpensWithoutWaking(t *testing.T) {
	t.Parallel()
	o := &opened{}
	k := kappAPIOver(newKappDiscovery(appsGV, packagingGV), o)
	if ok, err := k.OpenIfServed(context.Background()); !ok || err != nil || !k.Ready() {
		t.Fatalf("OpenIfServed = %t, %v; Ready %t", ok, err, k.Ready())
	}
	// Nothing waited: the watches open before the first reconcile.
	if *o != (opened{open: 1}) {
		t.Errorf("opened %+v, want one open and no wake", *o)
	}
}

func TestAPIDiscoveryErrorIsNotAMissingAPI(t *testing.T) {
	t.Parallel()
	d := newKappDiscovery(appsGV, packagingGV)
	d.fail = errors.New("connection refused")
	o := &opened{}
	k := kappAPIOver(d, o)
	if err := k.look(context.Background()); err == nil || k.Ready() || o.open != 0 {
		t.Fatalf("look with discovery failing: %v, Ready %t, opened %d", err, k.Ready(), o.open)
	}
}

func TestAPILooksAgainUntilServed(t *testing.T) {
	t.Parallel()
	d := newKappDiscovery(appsGV)
	o := &opened{}
	k := kappAPIOver(d, o)
	looks := 0
	d.d.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		// kube-apiserver serves a new CRD's kind a moment after it is
		// established: the third look finds it.
		if looks++; looks == 3 {
			d.serve(appsGV, packagingGV)
		}
		return false, nil, nil
	})
	k.lookUntilServed(context.Background())
	if !k.Ready() || o.open != 1 || o.wake != 1 {
		t.Fatalf("after lookUntilServed: Ready %t, opened %+v", k.Ready(), *o)
	}
}

// fastLooks makes a look after a change ask discovery every millisecond or
// so, up to a cap of 4 ms, for at most window.
func fastLooks(k *API, window time.Duration) {
	k.looks = wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: math.MaxInt32, Cap: 4 * time.Millisecond}
	k.window = window
}

// servedAtLook makes discovery serve both kinds from the nth look on.
func servedAtLook(d *kappDiscovery, n int) {
	looks := 0
	d.d.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		if looks++; looks == n {
			d.serve(appsGV, packagingGV)
		}
		return false, nil, nil
	})
}

func TestAPIKeepsLookingAtItsBackoffsCap(t *testing.T) {
	t.Parallel()
	d := newKappDiscovery(appsGV)
	o := &opened{}
	k := kappAPIOver(d, o)
	fastLooks(k, time.Minute)
	// Served long after the delays reached their cap (4 ms from the
	// fourth look on): a backoff whose steps end at its cap gave up there.
	servedAtLook(d, 20)
	if k.lookUntilServed(context.Background()); !k.Ready() || o.open != 1 {
		t.Fatalf("after lookUntilServed: Ready %t, opened %+v", k.Ready(), *o)
	}
}

func TestAPILooksAgainAtAChangeSeenWhileItLooked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newKappDiscovery(appsGV)
	o := &opened{}
	k := kappAPIOver(d, o)
	fastLooks(k, 50*time.Millisecond)
	// The CRD changes (established) while the look that its creation
	// started still runs; both looks come before kube-apiserver serves it.
	d.d.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
		k.changed()
		return false, nil, nil
	})
	k.changed()
	<-k.changes
	if k.lookUntilServed(ctx); k.Ready() {
		t.Fatal("opened an API that is not served")
	}
	select {
	case <-k.changes:
	default:
		t.Fatal("the change seen while the look ran was dropped: nothing would look again")
	}
	// The next look, for that change, finds it served.
	d.d.ReactionChain = d.d.ReactionChain[1:]
	d.serve(appsGV, packagingGV)
	k.changed()
	done := make(chan struct{})
	go func() { k.lookOnChanges(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("lookOnChanges did not open the API after a change")
	}
	if !k.Ready() || *o != (opened{open: 1, wake: 1}) {
		t.Fatalf("Ready %t, opened %+v", k.Ready(), *o)
	}
}
