package bundledeployment

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/memo"
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
type stateTracker struct{ memo.Keyed[installState] }

func (t *stateTracker) set(name, status, reason string) {
	next := installState{status, reason}
	t.Update(name, func(prev installState, ok bool) installState {
		if ok && prev == next {
			return next
		}
		if ok {
			bundleDeployments.WithLabelValues(prev.status, prev.reason).Dec()
		}
		bundleDeployments.WithLabelValues(status, reason).Inc()
		return next
	})
}

// Forget takes name out of its bucket.
func (t *stateTracker) Forget(name string, _ types.UID) {
	if prev, ok := t.Delete(name); ok {
		bundleDeployments.WithLabelValues(prev.status, prev.reason).Dec()
	}
}
