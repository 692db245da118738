package drift

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// reapplies counts the re-applies the drift repair asked kapp-controller for.
var reapplies = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "rukpak_kapp_drift_reapplies_total",
	Help: "Re-applies of an App that rukpak-kapp asked kapp-controller for because an installed object was deleted or changed by someone other than kapp.",
})

func init() { metrics.Registry.MustRegister(reapplies) }
