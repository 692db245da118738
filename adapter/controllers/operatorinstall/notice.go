package operatorinstall

import (
	"context"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// upgradeAvailable is 1 for each catalog install whose channel offers a
// higher version than the one installed, 0 for one at its head: what an
// alert on pending upgrades reads.
var upgradeAvailable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "rukpak_kapp_catalog_upgrade_available",
	Help: "1 when a catalog install's channel offers a higher version than the one installed (the OperatorInstall's UpgradeAvailable condition is True), else 0.",
}, []string{"namespace", "operatorinstall", "package", "channel"})

func init() {
	ctrlmetrics.Registry.MustRegister(upgradeAvailable)
}

// noticeGauge is the upgradeAvailable gauge of each install, as its status
// last said (the status is the memory: every install is reconciled, and
// its gauge set, after a restart).
type noticeGauge struct{ vec *prometheus.GaugeVec }

func (g noticeGauge) set(oi *catalogsv1alpha1.OperatorInstall, value float64) {
	if g.vec != nil {
		g.vec.With(prometheus.Labels{"namespace": oi.Namespace, "operatorinstall": oi.Name, "package": oi.Spec.PackageName, "channel": oi.Spec.Channel}).Set(value)
	}
}

// forget drops an install's gauge.
func (g noticeGauge) forget(ns, name string) {
	if g.vec != nil {
		g.vec.DeletePartialMatch(prometheus.Labels{"namespace": ns, "operatorinstall": name})
	}
}

// announce keeps the install's gauge as its status says and records a new
// version becoming available (before is the status stored before the
// write) as an Event on its PackageInstall (kubectl describe, kctrl's
// events).
func (r *Reconciler) announce(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall, before *catalogsv1alpha1.OperatorInstallStatus) {
	now := apimeta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeUpgradeAvailable)
	if now == nil {
		return
	}
	switch now.Status {
	case metav1.ConditionTrue:
		r.notices.set(oi, 1)
	case metav1.ConditionFalse:
		r.notices.set(oi, 0)
	}
	was := apimeta.FindStatusCondition(before.Conditions, catalogsv1alpha1.TypeUpgradeAvailable)
	if now.Status != metav1.ConditionTrue || (was != nil && was.Status == metav1.ConditionTrue && was.Message == now.Message) || r.recorder == nil {
		return
	}
	pi := &packagingv1alpha1.PackageInstall{}
	if err := r.direct.Get(ctx, client.ObjectKeyFromObject(oi), pi); err != nil {
		log.FromContext(ctx).Error(err, "read the PackageInstall to record the upgrade available on it", "packageInstall", oi.Namespace+"/"+oi.Name)
		return
	}
	pi.SetGroupVersionKind(packagingv1alpha1.SchemeGroupVersion.WithKind("PackageInstall"))
	related := oi.DeepCopy()
	related.SetGroupVersionKind(catalogsv1alpha1.GroupVersion.WithKind("OperatorInstall"))
	r.recorder.Eventf(pi, related, corev1.EventTypeNormal, catalogsv1alpha1.ReasonUpgradeAvailable, "Notice", "%s", now.Message)
}
