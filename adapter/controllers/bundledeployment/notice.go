package bundledeployment

import (
	"context"
	"fmt"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// upgradeAvailable is 1 for each catalog install whose channel offers a
// higher version than the one installed, 0 for one at its head: what an
// alert on pending upgrades reads.
var upgradeAvailable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "rukpak_kapp_catalog_upgrade_available",
	Help: "1 when a catalog install's channel offers a higher version than the one installed (the BundleDeployment's UpgradeAvailable condition is True), else 0.",
}, []string{"bundledeployment", "namespace", "packageinstall", "channel"})

func init() {
	ctrlmetrics.Registry.MustRegister(upgradeAvailable)
}

// notice gives the status what a catalog BundleDeployment's channel
// publishes (status.Channel), read from the cache of the catalogs'
// Packages; a BundleDeployment of no catalog gets none.
func (r *BundleDeploymentReconciler) notice(ctx context.Context, s *scope.Scope) {
	bd := s.BD
	in, ok := catalog.EntryOf(bd.Labels, bd.Annotations)
	ns := bd.Annotations[catalog.AnnotationPackagesNS]
	if !ok || ns == "" || in.RefName == "" || r.channels == nil {
		return
	}
	if h := s.Facts.Hold; h != nil && h.HasInstalled {
		// Held: the notice is of the version that runs.
		h.Installed.Channel, h.Installed.RefName = in.Channel, in.RefName
		in = h.Installed
	}
	ch := &status.Channel{Installed: in, PackageInstall: ns + "/" + bd.Annotations[catalog.AnnotationInstall], Policy: bd.Annotations[catalog.AnnotationUpgradeEdge],
		Approval: catalog.ApprovalOf(bd.Annotations)}
	published, err := r.channels.Channel(ctx, ns, in.RefName)
	if err != nil {
		ch.Unreadable = err.Error()
	}
	ch.Published = published
	s.Facts.Channel = ch
}

// storedNotice is a copy of the UpgradeAvailable condition bd has stored;
// nil when it has none.
func storedNotice(bd *rukpakv1alpha2.BundleDeployment) *metav1.Condition {
	c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeUpgradeAvailable)
	if c == nil {
		return nil
	}
	kept := *c
	return &kept
}

// announce keeps the install's gauge as the status says and, when wrote
// (the status was written; was is the notice stored before), records a
// new version becoming available as an Event on the PackageInstall
// (kubectl describe, kctrl's events).
func (r *BundleDeploymentReconciler) announce(ctx context.Context, before *rukpakv1alpha2.BundleDeployment, was *metav1.Condition, after rukpakv1alpha2.BundleDeploymentStatus, wrote bool) {
	now := apimeta.FindStatusCondition(after.Conditions, rukpakv1alpha2.TypeUpgradeAvailable)
	ns, name := before.Annotations[catalog.AnnotationPackagesNS], before.Annotations[catalog.AnnotationInstall]
	if now == nil || ns == "" || name == "" {
		return
	}
	labels := prometheus.Labels{"bundledeployment": before.Name, "namespace": ns, "packageinstall": name, "channel": before.Annotations[catalog.AnnotationChannel]}
	switch now.Status {
	case metav1.ConditionTrue:
		r.notices.set(labels, 1)
	case metav1.ConditionFalse:
		r.notices.set(labels, 0)
	}
	if !wrote || now.Status != metav1.ConditionTrue || (was != nil && was.Status == metav1.ConditionTrue && was.Message == now.Message) || r.recorder == nil {
		return
	}
	pi := &packagingv1alpha1.PackageInstall{}
	if err := r.direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi); err != nil {
		log.FromContext(ctx).Error(err, "read the PackageInstall to record the upgrade available on it", "packageInstall", ns+"/"+name)
		return
	}
	pi.SetGroupVersionKind(packagingv1alpha1.SchemeGroupVersion.WithKind("PackageInstall"))
	r.recorder.Eventf(pi, before, corev1.EventTypeNormal, rukpakv1alpha2.ReasonUpgradeAvailable, "Notice", "%s", now.Message)
}

// noticeGauge is the upgradeAvailable gauge of each catalog install, as
// its status last said (the status is the memory: every install is
// reconciled, and its gauge set, after a restart).
type noticeGauge struct{ vec *prometheus.GaugeVec }

// set keeps the install's gauge at value.
func (g noticeGauge) set(labels prometheus.Labels, value float64) {
	if g.vec != nil {
		g.vec.With(labels).Set(value)
	}
}

// Forget drops a BundleDeployment's gauge.
func (g noticeGauge) Forget(name string, _ types.UID) {
	if g.vec != nil {
		g.vec.DeletePartialMatch(prometheus.Labels{"bundledeployment": name})
	}
}

// installsOfPackage maps a change of a catalog Package (its metadata) to
// the catalog BundleDeployments of its OLM package whose Packages' namespace
// sees it (its own; every namespace for a Package of the global packaging
// namespace): the channel they follow may have moved.
func (r *BundleDeploymentReconciler) installsOfPackage(ctx context.Context, o client.Object) []reconcile.Request {
	pkg := o.GetLabels()[catalog.LabelPackage]
	if pkg == "" {
		return nil
	}
	var list rukpakv1alpha2.BundleDeploymentList
	if err := r.client.List(ctx, &list, client.MatchingLabels{catalog.LabelPackage: pkg}); err != nil {
		log.FromContext(ctx).Error(fmt.Errorf("list the BundleDeployments of package %s: %w", pkg, err), "the installs of a catalog Package's package are not woken")
		return nil
	}
	var out []reconcile.Request
	for _, bd := range list.Items {
		if ns := bd.Annotations[catalog.AnnotationPackagesNS]; ns != "" && r.channels != nil && r.channels.Sees(ns, o) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: bd.Name}})
		}
	}
	return out
}
