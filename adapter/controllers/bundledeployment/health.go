package bundledeployment

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/memo"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// installedObjects counts the installed objects Healthy is judged by, by
// their kstatus state, over every BundleDeployment.
var installedObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "rukpak_kapp_installed_objects",
	Help: "Installed objects judged for the Healthy condition (workloads and custom resources), by kstatus state.",
}, []string{"state"})

func init() {
	ctrlmetrics.Registry.MustRegister(installedObjects)
}

// ReasonObjectFailed is the reason of the Event that says an installed
// object turned Failed.
const ReasonObjectFailed = "ObjectFailed"

// judged is what the last look judged of one BundleDeployment's objects.
type judged struct {
	counts map[kstatus.Status]int
	failed []string
}

// healthTracker keeps each BundleDeployment's counts in the gauge, and the
// objects last seen Failed, so that an object turning Failed is one Event.
// A restart forgets them: an object still Failed then is said once more.
type healthTracker struct{ memo.Keyed[judged] }

// set records h for the BundleDeployment bd and says, as Events regarding
// it, which objects turned Failed since the last look.
func (t *healthTracker) set(bd *rukpakv1alpha2.BundleDeployment, h status.Health, recorder events.EventRecorder) {
	next := judged{counts: h.Counts}
	var news []status.Judged
	for _, j := range h.NotCurrent {
		if j.State == kstatus.FailedStatus {
			next.failed = append(next.failed, j.Object)
		}
	}
	t.Update(bd.Name, func(prev judged, ok bool) judged {
		if ok {
			for s, n := range prev.counts {
				installedObjects.WithLabelValues(string(s)).Sub(float64(n))
			}
		}
		for s, n := range next.counts {
			installedObjects.WithLabelValues(string(s)).Add(float64(n))
		}
		for _, j := range h.NotCurrent {
			if j.State == kstatus.FailedStatus && !slices.Contains(prev.failed, j.Object) {
				news = append(news, j)
			}
		}
		return next
	})
	if recorder == nil {
		return
	}
	for _, j := range news {
		recorder.Eventf(bd, nil, corev1.EventTypeWarning, ReasonObjectFailed, "JudgeHealth", "%s is Failed: %s", j.Object, j.Message)
	}
}

// Forget takes the BundleDeployment's objects out of the gauge.
func (t *healthTracker) Forget(name string, _ types.UID) {
	if prev, ok := t.Delete(name); ok {
		for s, n := range prev.counts {
			installedObjects.WithLabelValues(string(s)).Sub(float64(n))
		}
	}
}
