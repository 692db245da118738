package kappapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// API says whether kapp-controller's API (the App and PackageInstall
// kinds) is installed, and runs what needs it once it is: the adapter starts
// without it, says so on every claimed BundleDeployment and in its
// readiness, and starts working when the API appears, without a restart.
type API struct {
	discovery discovery.DiscoveryInterface
	cache     cache.Cache
	// open starts what needs the API (the App and PackageInstall watches,
	// drift repair); it runs once. requeue reconciles every BundleDeployment
	// once the API appeared while the adapter ran.
	open    func(ctx context.Context) error
	requeue func(ctx context.Context) error
	// ready is read by the readiness probe; the looks that set it run one
	// at a time (Start's, then lookOnChanges').
	ready atomic.Bool
	// changes holds one change of the API's CRDs not looked at yet: a
	// change while a look runs is looked at after it, never dropped.
	changes chan struct{}
	// looks is how a look after a change asks discovery again: for at
	// most window while discovery answers that a kind is not served, with
	// no end while discovery fails (an aggregated API answering 503).
	looks  wait.Backoff
	window time.Duration
	// waiting is what the last look that did not open found: empty once
	// the API is open; read by the readiness detail and logs.
	waiting atomic.Pointer[string]
	// onWaiting, when set, says the wait where users look (the
	// OperatorCatalogs' status): after the first look that did not open,
	// and every sixth after it (a minute at the backoff's cap).
	onWaiting func(ctx context.Context)
	// name is the API's, for logs and readiness; kinds are its kinds:
	// group/version → resource.
	name  string
	kinds map[string]string
}

// How a change of the API's CRDs or APIServices is looked at: discovery is
// asked at once, then after 250 ms, twice as long each time up to every
// 10 s. kube-apiserver serves a new CRD's kind a moment after the CRD is
// established, longer on a busy machine: a kind not served is looked for
// for two minutes, then at the next change. An aggregated API that
// answers with an error (kapp-controller stopped: 503) is looked for
// until it answers, whatever changes.
var (
	lookBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Steps: math.MaxInt32, Cap: 10 * time.Second}
	lookWindow  = 2 * time.Minute
)

// The kinds kapp-controller's release installs and the adapter uses.
var kappKinds = map[string]string{"kappctrl.k14s.io/v1alpha1": "apps", "packaging.carvel.dev/v1alpha1": "packageinstalls"}

// Missing is what a cluster without kapp-controller lacks, and what
// to do about it.
func Missing(namespaces []string) string {
	return fmt.Sprintf("kapp-controller's API (App kappctrl.k14s.io/v1alpha1, PackageInstall packaging.carvel.dev/v1alpha1) is not installed in this cluster: "+
		"install kapp-controller v0.53.1 or newer, watching namespace %s; rukpak-kapp installs this BundleDeployment as soon as the API appears",
		strings.Join(namespaces, ", "))
}

// New watches for the API through discovery and the CRD metadata in
// c; open runs once it is served, and requeue after open when the API
// appeared while the adapter ran.
func New(d discovery.DiscoveryInterface, c cache.Cache, open, requeue func(ctx context.Context) error) *API {
	return NewFor(d, c, "kapp-controller's API", kappKinds, open, requeue)
}

// NewFor is New for another API the adapter opens when it appears (the
// OperatorCatalog API, config/catalogs), named name for logs and
// readiness, of kinds (group/version → its resources, comma separated,
// each a CRD's, or an aggregated API's whose CRDs are not watched).
func NewFor(d discovery.DiscoveryInterface, c cache.Cache, name string, kinds map[string]string, open, requeue func(ctx context.Context) error) *API {
	served.WithLabelValues(name).Set(0)
	return &API{discovery: d, cache: c, open: open, requeue: requeue, name: name, kinds: kinds,
		changes: make(chan struct{}, 1), looks: lookBackoff, window: lookWindow}
}

// crd says whether a CRD of that name serves one of the API's kinds.
func (k *API) crd(name string) bool {
	for gv, resources := range k.kinds {
		for _, resource := range strings.Split(resources, ",") {
			if name == resource+"."+strings.Split(gv, "/")[0] {
				return true
			}
		}
	}
	return false
}

// OpenIfServed opens at once when the API is served, before the manager
// starts (the usual case: the adapter then starts as it always did, its
// App watches synced before any reconcile); false means the API must
// run (Start) to wait for it. Discovery failing is such a wait, not an
// error: the adapter starts whatever kapp-controller does; only a failure
// to open what needs the API is returned.
func (k *API) OpenIfServed(ctx context.Context) (bool, error) {
	served, err := k.served()
	if err != nil {
		k.wait(err.Error())
		log.FromContext(ctx).Info(k.name+" could not be looked for; the adapter starts without it and looks again with backoff", "error", err.Error())
		return false, nil
	}
	if !served {
		return false, nil
	}
	if err := k.open(ctx); err != nil {
		return false, err
	}
	k.opened()
	return true, nil
}

// Ready says the API is served and what needs it started.
func (k *API) Ready() bool { return k.ready.Load() }

// Waiting says what the API waits for, as a sentence: empty once it is
// open.
func (k *API) Waiting() string {
	if k.Ready() {
		return ""
	}
	if w := k.waiting.Load(); w != nil && *w != "" {
		return k.name + " is not served yet: " + *w
	}
	return k.name + " is not installed"
}

// wait notes what the last look found and sets the API's gauge.
func (k *API) wait(why string) {
	k.waiting.Store(&why)
	served.WithLabelValues(k.name).Set(0)
}

// Check is the readiness probe: not ready without the API, with what it
// waits for as the probe's detail.
func (k *API) Check(*http.Request) error {
	if !k.Ready() {
		return errors.New(k.Waiting())
	}
	return nil
}

// NeedLeaderElection: every replica reports its readiness.
func (k *API) NeedLeaderElection() bool { return false }

// Start looks once, and while the API is missing looks again whenever one of
// its CRDs or APIServices changes (an aggregated API's APIService turns
// Available when its server is back), and with backoff while discovery
// fails. It returns an error only when its watches cannot be set up: an
// API that is not there, or not answering, is waited for.
func (k *API) Start(ctx context.Context) error {
	err := k.look(ctx)
	switch {
	case k.Ready():
		// Open; a requeue that failed leaves the BundleDeployments to their
		// own events.
		if err != nil {
			log.FromContext(ctx).Error(err, "requeue what waited for "+k.name)
		}
		return nil
	case err != nil:
		k.wait(err.Error())
		log.FromContext(ctx).Info(k.name+" could not be looked for; looking again with backoff", "error", err.Error())
		k.changed()
	}
	k.said(ctx, 0)
	log.FromContext(ctx).Info("waiting for "+k.name+" to be installed", "missing", k.kinds)
	for _, w := range []struct {
		kind     metav1.TypeMeta
		concerns func(name string) bool
	}{
		{metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}, k.crd},
		{metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"}, k.apiService},
	} {
		informer, err := k.cache.GetInformer(ctx, &metav1.PartialObjectMetadata{TypeMeta: w.kind})
		if err != nil {
			return fmt.Errorf("watch %ss for %s: %w", w.kind.Kind, k.name, err)
		}
		changed := func(obj any) {
			if o, ok := obj.(metav1.Object); ok && w.concerns(o.GetName()) {
				k.changed()
			}
		}
		if _, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }}); err != nil {
			return err
		}
	}
	go k.lookOnChanges(ctx)
	return nil
}

// OnWaiting has f say the wait where users look, while the API is not
// open; it runs on every replica (f decides whether to write).
func (k *API) OnWaiting(f func(ctx context.Context)) { k.onWaiting = f }

// said runs onWaiting at the lookth look that did not open, when due.
func (k *API) said(ctx context.Context, look int) {
	if k.onWaiting != nil && !k.Ready() && look%6 == 0 {
		k.onWaiting(ctx)
	}
}

// apiService says whether an APIService of that name serves one of the
// API's group versions (kube-apiserver names one version.group for each,
// a CRD's too).
func (k *API) apiService(name string) bool {
	for gv := range k.kinds {
		group, version, _ := strings.Cut(gv, "/")
		if name == version+"."+group {
			return true
		}
	}
	return false
}

// changed notes a change of one of the API's CRDs; one noted and not yet
// looked at stands for any number.
func (k *API) changed() {
	select {
	case k.changes <- struct{}{}:
	default:
	}
}

// lookOnChanges looks after each change noted until the API is open.
func (k *API) lookOnChanges(ctx context.Context) {
	for !k.Ready() {
		select {
		case <-ctx.Done():
			return
		case <-k.changes:
		}
		k.lookUntilServed(ctx)
	}
}

// lookUntilServed looks after a change of one of the API's CRDs or
// APIServices, again with backoff, until the API is open, or k.window has
// passed and the last look found a kind not served (rather than failed to
// ask: that is looked at again, with no end).
func (k *API) lookUntilServed(ctx context.Context) {
	end := time.Now().Add(k.window)
	// A backoff's delays stay at its cap once they reach it (its steps
	// would end there instead): the window, or the adapter's end, ends the
	// looks.
	failing, looks := 0, 0
	_ = k.looks.DelayFunc().Until(ctx, true, true, func(context.Context) (bool, error) {
		err := k.look(ctx)
		looks++
		k.said(ctx, looks)
		switch {
		case k.Ready():
			if err != nil {
				log.FromContext(ctx).Error(err, "requeue what waited for "+k.name)
			}
			return true, nil
		case err != nil:
			k.wait(err.Error())
			// Said once, and every 30 looks (5 minutes at the cap) after.
			if failing%30 == 0 {
				log.FromContext(ctx).Info(k.name+" could not be looked for; looking again with backoff", "error", err.Error(), "looks", failing+1)
			}
			failing++
			return false, nil
		case time.Now().After(end):
			log.FromContext(ctx).Info(k.name+" is still not served; looking again at the next change of its CRDs or APIServices", "lookedFor", k.window.String())
			return true, nil
		}
		return false, nil
	})
}

// look opens once every kind is served, and wakes every BundleDeployment.
// A CRD that exists but is not yet established is looked at again at its
// next change (its status update).
func (k *API) look(ctx context.Context) error {
	if served, err := k.served(); err != nil || !served {
		return err
	}
	if k.Ready() {
		return nil
	}
	if err := k.open(ctx); err != nil {
		return err
	}
	k.opened()
	log.FromContext(ctx).Info(k.name + " is installed")
	return k.requeue(ctx)
}

// opened marks the API open.
func (k *API) opened() {
	k.ready.Store(true)
	k.waiting.Store(nil)
	served.WithLabelValues(k.name).Set(1)
}

// served says every kind is served; a kind not served is noted as what
// the API waits for.
func (k *API) served() (bool, error) {
	for gv, resources := range k.kinds {
		list, err := k.discovery.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			k.wait(gv + " is not served")
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("discover %s: %w", gv, err)
		}
		for _, resource := range strings.Split(resources, ",") {
			found := false
			for _, r := range list.APIResources {
				found = found || r.Name == resource
			}
			if !found {
				k.wait(fmt.Sprintf("%s is not served in %s", resource, gv))
				return false, nil
			}
		}
	}
	return true, nil
}
