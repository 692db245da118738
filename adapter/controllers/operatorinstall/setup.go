package operatorinstall

import (
	"context"
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Transient failures back off from one second to five minutes, as the
// BundleDeployment reconciler's do.
const (
	backoffBase = time.Second
	backoffMax  = 5 * time.Minute
)

// SetupWithManager registers the controller: OperatorInstalls from
// installs (a cache made once their API is served), the BundleDeployments
// the installs write from the manager's cache. The catalog Packages are
// watched from when kapp-controller's packaging API is served
// (WatchPackages): until then a channel cannot be read, and an install
// says so where it needs one.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, installs cache.Cache) error {
	var err error
	r.ctl, err = ctrl.NewControllerManagedBy(mgr).
		Named("operatorinstall").
		WatchesRawSource(source.Kind(installs, &catalogsv1alpha1.OperatorInstall{}, &handler.TypedEnqueueRequestForObject[*catalogsv1alpha1.OperatorInstall]{})).
		// An install's status changed: the installs of its namespace that
		// wait for their dependencies may go on.
		WatchesRawSource(source.Kind(installs, &catalogsv1alpha1.OperatorInstall{}, handler.TypedEnqueueRequestsFromMapFunc(r.dependentsOf))).
		// What an install's BundleDeployment reports is what it reports.
		Watches(&rukpakv1alpha2.BundleDeployment{}, handler.EnqueueRequestsFromMapFunc(installOf)).
		// Every install, once the catalog Packages can be read.
		WatchesRawSource(source.Channel(r.enqueue, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](backoffBase, backoffMax),
		}).
		Build(r)
	return err
}

// WatchPackages adds the watch of the catalog Packages in c (made once
// kapp-controller's packaging API is served): a channel moved (a
// repository updated, a catalog published) wakes its installs, and those
// waiting for what a Package may offer.
func (r *Reconciler) WatchPackages(c cache.Cache) error {
	if err := r.ctl.Watch(source.Kind(c, packagingapi.CatalogPackage(), handler.TypedEnqueueRequestsFromMapFunc(r.installsSeeing))); err != nil {
		return fmt.Errorf("watch catalog Packages: %w", err)
	}
	return nil
}

// EnqueueAll has every install looked at again: the catalog Packages,
// which it could not read before, can be read now.
func (r *Reconciler) EnqueueAll(ctx context.Context) error {
	return kube.EnqueueMatching(ctx, r.installs, &catalogsv1alpha1.OperatorInstallList{}, func(*catalogsv1alpha1.OperatorInstall) bool { return true }, r.enqueue)
}

// installOf maps a BundleDeployment to the install that writes it, or to
// the one of the PackageInstall whose template made it (to adopt it).
func installOf(_ context.Context, o client.Object) []reconcile.Request {
	a := o.GetAnnotations()
	if owner := a[catalog.AnnotationOperatorInstall]; owner != "" {
		ns, name, ok := strings.Cut(owner, "/")
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
	}
	if ns, name := a[catalog.AnnotationPackagesNS], a[catalog.AnnotationInstall]; ns != "" && name != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
	}
	return nil
}

// waitsForDependencies says oi waits for what it requires.
func waitsForDependencies(oi *catalogsv1alpha1.OperatorInstall) bool {
	for _, d := range oi.Status.Dependencies {
		if !d.Installed {
			return true
		}
	}
	c := apimeta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == catalogsv1alpha1.ReasonDependenciesUnmet
}

// dependentsOf maps a change of an install to the other installs of its
// namespace that wait for their dependencies.
func (r *Reconciler) dependentsOf(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall) []reconcile.Request {
	var list catalogsv1alpha1.OperatorInstallList
	if err := r.installs.List(ctx, &list, client.InNamespace(oi.Namespace)); err != nil {
		log.FromContext(ctx).Error(fmt.Errorf("list the OperatorInstalls of namespace %s: %w", oi.Namespace, err), "the installs waiting for dependencies are not woken")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if o := &list.Items[i]; o.Name != oi.Name && waitsForDependencies(o) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		}
	}
	return out
}

// installsSeeing maps a change of a catalog Package (its metadata) to the
// installs of its OLM package in the namespaces that see it (its own;
// every one for a Package of the global packaging namespace), and to those
// there that wait for their dependencies.
func (r *Reconciler) installsSeeing(ctx context.Context, o *metav1.PartialObjectMetadata) []reconcile.Request {
	pkg := o.GetLabels()[catalog.LabelPackage]
	if pkg == "" {
		return nil
	}
	var opts []client.ListOption
	if !r.channels.InGlobal(o) {
		opts = append(opts, client.InNamespace(o.GetNamespace()))
	}
	var list catalogsv1alpha1.OperatorInstallList
	if err := r.installs.List(ctx, &list, opts...); err != nil {
		log.FromContext(ctx).Error(fmt.Errorf("list the OperatorInstalls that see catalog package %s: %w", pkg, err), "the installs of a catalog Package's package are not woken")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		oi := &list.Items[i]
		if (oi.Spec.PackageName == pkg || waitsForDependencies(oi)) && r.channels.Sees(oi.Namespace, o) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(oi)})
		}
	}
	return out
}
