package adapter

import (
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundle"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Transient failures back off from one second to five minutes, in line with
// kapp-controller's own retry cap, so a broken API server is not hammered.
const (
	backoffBase = time.Second
	backoffMax  = 5 * time.Minute
)

// SetupWithManager registers the controller: BundleDeployments of the
// claimed classes, and the Apps they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &rukpakv1alpha2.BundleDeployment{}, configMapIndex, r.configMapsRead); err != nil {
		return fmt.Errorf("index bundle deployments by configmap: %w", err)
	}
	// A BundleDeployment the adapter holds a finalizer on stays in view
	// when its class changes away, so it can be released.
	claimed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		bd, ok := o.(*rukpakv1alpha2.BundleDeployment)
		return ok && (r.classes.claims(bd) || controllerutil.ContainsFinalizer(bd, Finalizer))
	})
	b, err := r.watchReferences(mgr, ctrl.NewControllerManagedBy(mgr))
	if err != nil {
		return err
	}
	return b.
		Named("bundledeployment").
		For(&rukpakv1alpha2.BundleDeployment{}, builder.WithPredicates(claimed)).
		Owns(&kappctrlv1alpha1.App{}).
		// The serve mode: the PackageInstall is bd's, its App the
		// PackageInstall's.
		Owns(&packagingv1alpha1.PackageInstall{}).
		Watches(&kappctrlv1alpha1.App{}, handler.EnqueueRequestsFromMapFunc(packageInstallApp)).
		// Content Secrets: one deleted by hand is recreated at once.
		Owns(&corev1.Secret{}).
		// ConfigMaps the adapter packs itself: a change or a late arrival
		// is picked up at once. kapp-controller watches the ones it reads.
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.bundlesReading)).
		// Installed workloads: kapp-controller judges readiness only while a
		// deploy runs, so Healthy follows a lost node or a stuck rollout
		// between syncs from these (label-selected, see InstalledSelector).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(ownerOf)).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(ownerOf)).
		Watches(&appsv1.DaemonSet{}, handler.EnqueueRequestsFromMapFunc(ownerOf)).
		// What registry+v1 bundles waiting for dependencies wait for: an API
		// served (a CRD or an APIService appearing), a bundle installed (an
		// App's status). Metadata only: the adapter never reads their specs.
		WatchesMetadata(metadataOf("apiextensions.k8s.io/v1", "CustomResourceDefinition"), handler.EnqueueRequestsFromMapFunc(r.waiting.wake)).
		WatchesMetadata(metadataOf("apiregistration.k8s.io/v1", "APIService"), handler.EnqueueRequestsFromMapFunc(r.waiting.wake)).
		Watches(&kappctrlv1alpha1.App{}, handler.EnqueueRequestsFromMapFunc(r.waiting.wake)).
		WithOptions(controller.Options{
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](backoffBase, backoffMax),
		}).
		Complete(r)
}

// configMapIndex indexes BundleDeployments by the ConfigMaps their
// adapter-fetched source reads, so a ConfigMap event (kapp writes its app
// records as ConfigMaps in the same namespace on every deploy) costs one
// index lookup instead of a pass over every BundleDeployment.
const configMapIndex = "rukpak-kapp.configMapsRead"

func (r *Reconciler) configMapsRead(o client.Object) []string {
	bd, ok := o.(*rukpakv1alpha2.BundleDeployment)
	if !ok || !r.classes.claims(bd) || !bundle.AdapterFetches(r.classes.asBuiltin(bd)) {
		return nil
	}
	var names []string
	for _, cm := range bd.Spec.Source.ConfigMaps {
		names = append(names, cm.ConfigMap.Name)
	}
	return names
}

// bundlesReading maps a ConfigMap in the system namespace to the
// BundleDeployments whose adapter-fetched source reads it.
func (r *Reconciler) bundlesReading(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() != r.cfg.SystemNamespace {
		return nil
	}
	list := &rukpakv1alpha2.BundleDeploymentList{}
	if err := r.client.List(ctx, list, client.MatchingFields{configMapIndex: o.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "list bundle deployments for a configmap change", "configmap", o.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// metadataOf is an object of a kind the adapter watches by metadata only.
func metadataOf(apiVersion, kind string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}}
}
