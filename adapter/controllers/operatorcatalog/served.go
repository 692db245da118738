package operatorcatalog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// packagingGroupVersion is the group version of kapp-controller's
// packaging API, asked by the probe.
const packagingGroupVersion = "data.packaging.carvel.dev/v1alpha1"

// How the packaging API is looked at. While it answers and a catalog
// exists, a probe every ProbeEvery; a probe that takes longer than
// ProbeTimeout is an outage (a hung aggregated server holds every request
// sent to it). During an outage, a probe after a delay that starts at
// firstLook and doubles up to lastLook. The delay goes on from where it
// was when an outage starts within Stable of the last one's end: an API
// that answers the probe while writes fail ends and starts outages in a
// loop, and the loop slows to one write and one probe per lastLook.
const (
	ProbeEvery   = 30 * time.Second
	ProbeTimeout = 5 * time.Second
	Stable       = 2 * time.Minute
	firstLook    = 250 * time.Millisecond
	lastLook     = 10 * time.Second
)

// Probe asks the packaging API whether it answers, within ctx.
type Probe func(ctx context.Context) error

// DiscoveryProbe asks for the packaging API's resources through d: a
// request that kube-apiserver's aggregator sends to kapp-controller's API
// server, as every Package read or write is.
func DiscoveryProbe(d discovery.DiscoveryInterface) Probe {
	return func(ctx context.Context) error {
		return d.RESTClient().Get().AbsPath("/apis/" + packagingGroupVersion).Do(ctx).Error()
	}
}

// Served follows, for the whole run of the catalog controller, whether
// kapp-controller's packaging API answers. An outage starts when a watch
// of the catalogs' cache (Packages, PackageMetadata) or a write answers
// that the API is not available (its aggregated server down: 503), or
// when the probe made while catalogs exist gets no answer in time; it
// ends when the probe, made with backoff from then on, answers. Each
// change wakes every OperatorCatalog (Changes), which then says
// PackagingAPIUnavailable, or is published again. With no catalog,
// nothing is asked.
type Served struct {
	probe Probe
	// catalogs says whether an OperatorCatalog exists (read from a cache).
	catalogs func(ctx context.Context) bool
	// down holds what the outage was seen as; nil while the API answers.
	down atomic.Pointer[string]
	// lost asks Start to look for the API's return.
	lost chan struct{}
	// changes carries one event per change, for the controller's watch.
	changes chan event.GenericEvent
	// now is the clock of the backoff; every the probes' period while the
	// API answers, first and last the backoff's bounds during an outage.
	now                func() time.Time
	every, first, last time.Duration

	mu sync.Mutex
	// delay is the wait before the next probe of an outage; ended is
	// when the last outage ended.
	delay time.Duration
	ended time.Time
}

// NewServed follows the packaging API through probe, made while catalogs
// says an OperatorCatalog exists.
func NewServed(probe Probe, catalogs func(ctx context.Context) bool) *Served {
	return &Served{probe: probe, catalogs: catalogs, lost: make(chan struct{}, 1), changes: make(chan event.GenericEvent, 1), now: time.Now, every: ProbeEvery, first: firstLook, last: lastLook}
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
	s.start(ctx, err.Error())
	return true
}

// start begins an outage seen as why, unless one is under way.
func (s *Served) start(ctx context.Context, why string) {
	if !s.down.CompareAndSwap(nil, &why) {
		return
	}
	s.mu.Lock()
	if s.ended.IsZero() || s.now().Sub(s.ended) >= Stable {
		s.delay = s.first
	}
	s.mu.Unlock()
	log.FromContext(ctx).Info("kapp-controller's packaging API stopped answering; the OperatorCatalogs say so until it is back", "error", why)
	s.changed()
	select {
	case s.lost <- struct{}{}:
	default:
	}
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

// Start probes the API while it answers and catalogs exist, and looks for
// its return after each outage, until ctx ends.
func (s *Served) Start(ctx context.Context) error {
	every := time.NewTicker(s.every)
	defer every.Stop()
	for {
		if s.Down() == "" {
			select {
			case <-ctx.Done():
				return nil
			case <-s.lost:
				continue
			case <-every.C:
				if !s.catalogs(ctx) {
					continue
				}
				if err := s.ask(ctx); s.outage(err) {
					s.start(ctx, err.Error())
				}
				continue
			}
		}
		s.mu.Lock()
		wait := s.delay
		s.delay = min(2*s.delay, s.last)
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		if err := s.ask(ctx); err != nil {
			continue
		}
		s.mu.Lock()
		s.ended = s.now()
		s.mu.Unlock()
		s.down.Store(nil)
		log.FromContext(ctx).Info("kapp-controller's packaging API answers again; the OperatorCatalogs are published")
		s.changed()
	}
}

// ask probes the API within ProbeTimeout.
func (s *Served) ask(ctx context.Context) error {
	bounded, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	err := s.probe(bounded)
	if err != nil && errors.Is(bounded.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("%w within %s", errNoAnswer, ProbeTimeout)
	}
	return err
}

// errNoAnswer is a probe that timed out.
var errNoAnswer = errors.New("kapp-controller's packaging API did not answer a probe")

// outage says a probe's err is the API's absence: not available, or no
// answer in time. A refusal (403, 404) is not: the API answered.
func (s *Served) outage(err error) bool {
	return err != nil && (packagingapi.Unavailable(err) || errors.Is(err, errNoAnswer))
}
