package controller

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// bundleDeployments counts BundleDeployments by the state of their
// Installed condition, for dashboards and alerts. Reconcile counts, errors
// and durations come from controller-runtime's own metrics.
var bundleDeployments = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "rukpak_kapp_bundledeployments",
	Help: "BundleDeployments handled by this adapter, by the status and reason of their Installed condition.",
}, []string{"status", "reason"})

func init() {
	ctrlmetrics.Registry.MustRegister(bundleDeployments)
}

type installState struct{ status, reason string }

// stateTracker remembers each BundleDeployment's last reported state so the
// gauge can move it from one bucket to another.
type stateTracker struct {
	mu    sync.Mutex
	state map[string]installState
}

func (t *stateTracker) set(name, status, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := installState{status, reason}
	if prev, ok := t.state[name]; ok {
		if prev == next {
			return
		}
		bundleDeployments.WithLabelValues(prev.status, prev.reason).Dec()
	}
	if t.state == nil {
		t.state = map[string]installState{}
	}
	t.state[name] = next
	bundleDeployments.WithLabelValues(status, reason).Inc()
}

func (t *stateTracker) Forget(name string, _ types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, ok := t.state[name]; ok {
		bundleDeployments.WithLabelValues(prev.status, prev.reason).Dec()
		delete(t.state, name)
	}
}

func (t *stateTracker) remembers(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.state[name]
	return ok
}
