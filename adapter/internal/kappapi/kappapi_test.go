package kappapi

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"
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
type opened struct{ open, requeue int }

func kappAPIOver(d *kappDiscovery, o *opened) *API {
	return New(d.d, nil,
		func(context.Context) error { o.open++; return nil },
		func(context.Context) error { o.requeue++; return nil })
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
	if *o != (opened{open: 1, requeue: 1}) {
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
	if !k.Ready() || o.open != 1 || o.requeue != 1 {
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
	if !k.Ready() || *o != (opened{open: 1, requeue: 1}) {
		t.Fatalf("Ready %t, opened %+v", k.Ready(), *o)
	}
}

// watched is a cache whose informers of CRDs and APIServices the test
// drives; nothing else of it is used.
type watched struct {
	cache.Cache
	mu        sync.Mutex
	informers map[string]*controllertest.FakeInformer
}

func (w *watched) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if w.informers == nil {
		w.informers = map[string]*controllertest.FakeInformer{}
	}
	if w.informers[kind] == nil {
		w.informers[kind] = controllertest.NewFakeInformer(controllertest.Synced)
	}
	return w.informers[kind], nil
}

// change sends an update of the object kind/name to the API's handlers.
func (w *watched) change(kind, name string) {
	w.mu.Lock()
	i := w.informers[kind]
	w.mu.Unlock()
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	i.Update(o, o)
}

var unavailable = apierrors.NewServiceUnavailable("the server is currently unable to handle the request")

func TestAPIStartsWhileDiscoveryFails(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := newKappDiscovery(appsGV, packagingGV)
	d.fail = unavailable
	k, woken := wakingAPI(d)
	k.cache = &watched{}
	fastLooks(k, time.Millisecond)
	// An aggregated API answering 503 at start is waited for, not an error
	// that would stop the adapter.
	if ok, err := k.OpenIfServed(ctx); ok || err != nil {
		t.Fatalf("OpenIfServed with discovery answering 503 = %t, %v; want false and no error", ok, err)
	}
	if err := k.Start(ctx); err != nil {
		t.Fatalf("Start with discovery answering 503: %v; want the API waited for", err)
	}
	if w := k.Waiting(); !strings.Contains(w, "unable to handle the request") {
		t.Errorf("Waiting() = %q; want what discovery answered", w)
	}
	if err := k.Check(nil); err == nil || !strings.Contains(err.Error(), "unable to handle the request") {
		t.Errorf("readiness = %v; want it to say what the API waits for", err)
	}
	// Looks go on past the window while discovery fails, with no change
	// of a CRD or APIService to start them again.
	waitLooks(t, d, 50)
	d.mu.Lock()
	d.fail = nil
	d.mu.Unlock()
	waitWoken(t, woken)
	if k.Waiting() != "" || !k.Ready() {
		t.Fatalf("opened, and still waiting: %q", k.Waiting())
	}
}

func TestAPIOpensAtAChangeOfItsAPIService(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := newKappDiscovery(appsGV)
	k, woken := wakingAPI(d)
	w := &watched{}
	k.cache = w
	fastLooks(k, 10*time.Millisecond)
	// A kind not served (no error) is looked for again at a change only.
	if err := k.Start(ctx); err != nil || k.Ready() {
		t.Fatalf("Start: %v, Ready %t", err, k.Ready())
	}
	d.serve(appsGV, packagingGV)
	w.change("APIService", "v1beta1.example.com")
	w.change("CustomResourceDefinition", "widgets.example.com")
	// The other objects' changes start no look.
	select {
	case <-k.changes:
		t.Fatal("a change of another APIService or CRD started a look")
	case <-time.After(50 * time.Millisecond):
	}
	w.change("APIService", "v1alpha1.packaging.carvel.dev")
	waitWoken(t, woken)
}

// wakingAPI is an API over d whose wake closes the channel it returns.
func wakingAPI(d *kappDiscovery) (*API, chan struct{}) {
	woken := make(chan struct{})
	return New(d.d, nil, func(context.Context) error { return nil },
		func(context.Context) error { close(woken); return nil }), woken
}

// waitLooks waits until discovery was asked n times more.
func waitLooks(t *testing.T, d *kappDiscovery, n int) {
	t.Helper()
	// Not under d.mu: the fake holds its own lock while a reactor takes
	// d.mu.
	asked := func() int { return len(d.d.Actions()) }
	want := asked() + n
	for end := time.Now().Add(time.Minute); asked() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("discovery asked %d times, want %d: the looks stopped", asked(), want)
		}
	}
}

func waitWoken(t *testing.T, woken chan struct{}) {
	t.Helper()
	select {
	case <-woken:
	case <-time.After(time.Minute):
		t.Fatal("the API was not opened")
	}
}
