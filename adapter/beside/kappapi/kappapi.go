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
	// drift repair); it runs once. wake reconciles every BundleDeployment
	// once the API appeared while the adapter ran.
	open func(ctx context.Context) error
	wake func(ctx context.Context) error
	// ready is read by the readiness probe; the looks that set it run one
	// at a time (Start's, then lookOnChanges').
	ready atomic.Bool
	// changes holds one change of the API's CRDs not looked at yet: a
	// change while a look runs is looked at after it, never dropped.
	changes chan struct{}
	// looks is how a look after a change asks discovery again, for at
	// most window.
	looks  wait.Backoff
	window time.Duration
	// name is the API's, for logs and readiness; kinds are its kinds:
	// group/version → resource.
	name  string
	kinds map[string]string
}

// How a change of the API's CRDs is looked at: discovery is asked at
// once, then after 250 ms, twice as long each time up to every 10 s, for
// two minutes. kube-apiserver serves a new CRD's kind a moment after the
// CRD is established, longer on a busy machine; a look that gave up after
// 16 s (as one did) could leave the API closed until another change of its
// CRDs, which may never come.
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
// c; open runs once it is served, and wake after open when the API
// appeared while the adapter ran.
func New(d discovery.DiscoveryInterface, c cache.Cache, open, wake func(ctx context.Context) error) *API {
	return NewFor(d, c, "kapp-controller's API", kappKinds, open, wake)
}

// NewFor is New for another API the adapter opens when it appears (the
// OperatorCatalog API, config/catalogs), named name for logs and
// readiness, of kinds (group/version → resource, each a CRD's, or an
// aggregated API's whose CRDs are not watched).
func NewFor(d discovery.DiscoveryInterface, c cache.Cache, name string, kinds map[string]string, open, wake func(ctx context.Context) error) *API {
	return &API{discovery: d, cache: c, open: open, wake: wake, name: name, kinds: kinds,
		changes: make(chan struct{}, 1), looks: lookBackoff, window: lookWindow}
}

// crd says whether a CRD of that name serves one of the API's kinds.
func (k *API) crd(name string) bool {
	for gv, resource := range k.kinds {
		if name == resource+"."+strings.Split(gv, "/")[0] {
			return true
		}
	}
	return false
}

// OpenIfServed opens at once when the API is served, before the manager
// starts (the usual case: the adapter then starts as it always did, its
// App watches synced before any reconcile); false means the API must
// run (Start) to wait for it.
func (k *API) OpenIfServed(ctx context.Context) (bool, error) {
	served, err := k.served()
	if err != nil || !served {
		return false, err
	}
	if err := k.open(ctx); err != nil {
		return false, err
	}
	k.ready.Store(true)
	return true, nil
}

// Ready says the API is served and what needs it started.
func (k *API) Ready() bool { return k.ready.Load() }

// Check is the readiness probe: not ready without the API.
func (k *API) Check(*http.Request) error {
	if !k.Ready() {
		return errors.New(k.name + " is not installed")
	}
	return nil
}

// NeedLeaderElection: every replica reports its readiness.
func (k *API) NeedLeaderElection() bool { return false }

// Start looks once, and while the API is missing looks again whenever one of
// its CRDs changes.
func (k *API) Start(ctx context.Context) error {
	if err := k.look(ctx); err != nil || k.Ready() {
		return err
	}
	log.FromContext(ctx).Info("waiting for "+k.name+" to be installed", "missing", k.kinds)
	crds, err := k.cache.GetInformer(ctx, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}})
	if err != nil {
		return fmt.Errorf("watch CRDs for %s: %w", k.name, err)
	}
	changed := func(obj any) {
		if o, ok := obj.(metav1.Object); ok && (k.crd(o.GetName())) {
			k.changed()
		}
	}
	if _, err = crds.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }}); err != nil {
		return err
	}
	go k.lookOnChanges(ctx)
	return nil
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

// lookUntilServed looks after a change of one of the API's CRDs, again
// with backoff, until the API is open or k.window has passed.
func (k *API) lookUntilServed(ctx context.Context) {
	within, cancel := context.WithTimeout(ctx, k.window)
	defer cancel()
	// A backoff's delays stay at its cap once they reach it (its steps
	// would end there instead): the window ends the looks.
	err := k.looks.DelayFunc().Until(within, true, true, func(context.Context) (bool, error) {
		// What the look opens lives as long as the adapter, not the window.
		if err := k.look(ctx); err != nil {
			log.FromContext(ctx).Error(err, "look for "+k.name)
		}
		return k.Ready(), nil
	})
	if err != nil && !k.Ready() && ctx.Err() == nil {
		log.FromContext(ctx).Info(k.name+" is still not served; looking again at the next change of its CRDs", "lookedFor", k.window.String())
	}
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
	k.ready.Store(true)
	log.FromContext(ctx).Info(k.name + " is installed")
	return k.wake(ctx)
}

// served says every kind is served.
func (k *API) served() (bool, error) {
	for gv, resource := range k.kinds {
		list, err := k.discovery.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("discover %s: %w", gv, err)
		}
		found := false
		for _, r := range list.APIResources {
			found = found || r.Name == resource
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}
