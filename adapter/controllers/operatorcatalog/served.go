package operatorcatalog

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// packagingGroupVersion is the group version of kapp-controller's
// packaging API, looked for in discovery.
const packagingGroupVersion = "data.packaging.carvel.dev/v1alpha1"

// How an outage is looked at: discovery is asked after 250 ms, twice as
// long each time up to every 10 s, until the API answers.
var servedLooks = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second}

// Served follows, for the whole run of the catalog controller, whether
// kapp-controller's packaging API answers: an outage is seen when a watch
// of the catalogs' cache (Packages, PackageMetadata) or a write answers
// that the API is not available (its aggregated server down: 503), and
// its end when discovery answers again, asked with backoff from then on.
// Each change wakes every OperatorCatalog (Changes), which then says
// PackagingAPIUnavailable, or is published again. Nothing is asked while
// the API answers.
type Served struct {
	discovery discovery.DiscoveryInterface
	// down holds what the outage was seen as; nil while the API answers.
	down atomic.Pointer[string]
	// lost asks Start to look for the API's return.
	lost chan struct{}
	// changes carries one event per change, for the controller's watch.
	changes chan event.GenericEvent
}

// NewServed follows the packaging API through d.
func NewServed(d discovery.DiscoveryInterface) *Served {
	return &Served{discovery: d, lost: make(chan struct{}, 1), changes: make(chan event.GenericEvent, 1)}
}

// Down is what the outage was seen as; "" while the API answers.
func (s *Served) Down() string {
	if d := s.down.Load(); d != nil {
		return *d
	}
	return ""
}

// Failed notes err of a request to the packaging API: one that says the
// API is not available starts an outage (a 409, a refusal of one object,
// or any other error does not). It says whether err was such an outage.
func (s *Served) Failed(ctx context.Context, err error) bool {
	if err == nil || !packagingapi.Unavailable(err) {
		return false
	}
	why := err.Error()
	if s.down.CompareAndSwap(nil, &why) {
		log.FromContext(ctx).Info("kapp-controller's packaging API stopped answering; the OperatorCatalogs say so until it is back", "error", why)
		s.changed()
		select {
		case s.lost <- struct{}{}:
		default:
		}
	}
	return true
}

// WatchErrorHandler is the catalogs' cache's: the informers' own handling,
// then an outage noted.
func (s *Served) WatchErrorHandler(ctx context.Context, r *toolscache.Reflector, err error) {
	toolscache.DefaultWatchErrorHandler(ctx, r, err)
	s.Failed(ctx, err)
}

// Changes are the events of each change of the API's state.
func (s *Served) Changes() <-chan event.GenericEvent { return s.changes }

func (s *Served) changed() {
	select {
	case s.changes <- event.GenericEvent{Object: &catalogsv1alpha1.OperatorCatalog{}}:
	default:
		// One change not yet taken stands for any number: each wakes every
		// catalog.
	}
}

// NeedLeaderElection: only the leader runs the catalog controller.
func (s *Served) NeedLeaderElection() bool { return true }

// Start looks for the API's return after each outage, until ctx ends.
func (s *Served) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.lost:
		}
		_ = servedLooks.DelayFunc().Until(ctx, false, true, func(context.Context) (bool, error) {
			if _, err := s.discovery.ServerResourcesForGroupVersion(packagingGroupVersion); err != nil {
				return false, nil
			}
			s.down.Store(nil)
			log.FromContext(ctx).Info("kapp-controller's packaging API answers again; the OperatorCatalogs are published")
			s.changed()
			return true, nil
		})
	}
}
