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

// prunes counts the deletes taken for kapp's prune and left to it.
var prunes = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "rukpak_kapp_drift_prunes_total",
	Help: "Deletes of installed objects that drift repair left to kapp: made while a new spec of their App was deployed, of an object that spec's deploy did not write, as kapp prunes what a new bundle no longer holds.",
})

func init() { metrics.Registry.MustRegister(prunes) }

// reruns counts the runs asked for because kapp-controller's run of an App
// made no progress.
var reruns = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "rukpak_kapp_stalled_reruns_total",
	Help: "Runs of an App that rukpak-kapp asked kapp-controller for because kapp-controller's run of it stopped reporting progress (lost to a restart or a failed status write), or to tell a silent step still running from a lost run.",
})

func init() { metrics.Registry.MustRegister(reruns) }

// unwatched is 1 for each kind whose watch of installed objects is
// failing (see kinds.failing): drift of its objects waits for the App's
// sync period meanwhile.
var unwatched = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "rukpak_kapp_drift_watch_failing",
	Help: "1 for each kind of installed objects whose watch is failing (forbidden, not served, the API server away) and retried with backoff; drift of its objects is repaired at the App's sync period until the watch works again.",
}, []string{"kind"})

func init() { metrics.Registry.MustRegister(unwatched) }
