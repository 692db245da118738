package bundledeployment

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
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Transient failures back off from one second to five minutes, in line with
// kapp-controller's own retry cap, so a broken API server is not hammered.
const (
	backoffBase = time.Second
	backoffMax  = 5 * time.Minute
)

// SetupWithManager registers the controller: BundleDeployments of the
// claimed classes and what the adapter writes for them. The watches of
// kapp-controller's kinds come with WatchKapp, once its API is installed.
func (r *BundleDeploymentReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &rukpakv1alpha2.BundleDeployment{}, configMapIndex, r.configMapsRead); err != nil {
		return fmt.Errorf("index bundle deployments by configmap: %w", err)
	}
	// A BundleDeployment the adapter holds a finalizer on stays in view
	// when its class changes away, so it can be released.
	claimed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		bd, ok := o.(*rukpakv1alpha2.BundleDeployment)
		return ok && (r.set.Classes.Claims(bd) || controllerutil.ContainsFinalizer(bd, kube.Finalizer))
	})
	b, err := r.watchReferences(mgr, ctrl.NewControllerManagedBy(mgr))
	if err != nil {
		return err
	}
	r.ctl, err = b.
		Named("bundledeployment").
		For(&rukpakv1alpha2.BundleDeployment{}, builder.WithPredicates(claimed)).
		// Content Secrets: one deleted by hand is recreated at once.
		Owns(&corev1.Secret{}).
		// rukpak's first API: the Bundles a template generates (a Bundle
		// deleted by hand is made again, one gone unblocks the limit).
		Owns(&rukpakv1alpha1.Bundle{}).
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
		WatchesMetadata(metadataOf("apiextensions.k8s.io/v1", "CustomResourceDefinition"), handler.EnqueueRequestsFromMapFunc(r.waits.DependentsOf)).
		WatchesMetadata(metadataOf("apiregistration.k8s.io/v1", "APIService"), handler.EnqueueRequestsFromMapFunc(r.waits.DependentsOf)).
		// Every BundleDeployment, once kapp-controller's API appears.
		WatchesRawSource(source.Channel(r.enqueue, &handler.EnqueueRequestForObject{})).
		// Installed custom resources, for Healthy: a kind is watched from
		// the first App that reports installing it.
		WatchesRawSource(r.customSource()).
		WithOptions(controller.Options{
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](backoffBase, backoffMax),
		}).
		Build(r)
	return err
}

// WatchKapp adds the watches of kapp-controller's kinds, whose API must be
// served.
func (r *BundleDeploymentReconciler) WatchKapp(mgr ctrl.Manager) error {
	owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &rukpakv1alpha2.BundleDeployment{}, handler.OnlyControllerOwner())
	for _, w := range []struct {
		obj client.Object
		h   handler.EventHandler
	}{
		{&kappctrlv1alpha1.App{}, owner},
		// The serve mode: the PackageInstall is bd's, its App the
		// PackageInstall's.
		{&packagingv1alpha1.PackageInstall{}, owner},
		{&kappctrlv1alpha1.App{}, handler.EnqueueRequestsFromMapFunc(packageInstallApp)},
		// An App or PackageInstall the garbage collector orphaned (a delete
		// with propagationPolicy Orphan) no longer names its owner; its
		// owner labels still do, so its deletion still finishes the
		// BundleDeployment's.
		{&kappctrlv1alpha1.App{}, handler.EnqueueRequestsFromMapFunc(ownerOf)},
		{&packagingv1alpha1.PackageInstall{}, handler.EnqueueRequestsFromMapFunc(ownerOf)},
		// A bundle installed, which a waiting dependency may be.
		{&kappctrlv1alpha1.App{}, handler.EnqueueRequestsFromMapFunc(r.waits.DependentsOf)},
	} {
		if err := r.ctl.Watch(source.Kind(mgr.GetCache(), w.obj, w.h)); err != nil {
			return fmt.Errorf("watch %T: %w", w.obj, err)
		}
	}
	return nil
}

// EnqueueAll has every BundleDeployment reconciled again: what waited for
// kapp-controller's API goes on.
func (r *BundleDeploymentReconciler) EnqueueAll(ctx context.Context, c client.Reader) error {
	return kube.EnqueueMatching(ctx, c, &rukpakv1alpha2.BundleDeploymentList{}, func(*rukpakv1alpha2.BundleDeployment) bool { return true }, r.enqueue)
}

// EnqueueUnpackFailed has every BundleDeployment whose source could not be
// fetched reconciled again now, not at the end of its backoff: what it
// failed on (kapp-controller-config's CAs or proxies) changed.
func (r *BundleDeploymentReconciler) EnqueueUnpackFailed(ctx context.Context, c client.Reader) error {
	return kube.EnqueueMatching(ctx, c, &rukpakv1alpha2.BundleDeploymentList{}, func(bd *rukpakv1alpha2.BundleDeployment) bool {
		return status.UnpackFailed(bd.Status.Conditions)
	}, r.enqueue)
}

// configMapIndex indexes BundleDeployments by the ConfigMaps their
// adapter-fetched source reads, so a ConfigMap event (kapp writes its app
// records as ConfigMaps in the same namespace on every deploy) costs one
// index lookup instead of a pass over every BundleDeployment.
const configMapIndex = "rukpak-kapp.configMapsRead"

func (r *BundleDeploymentReconciler) configMapsRead(o client.Object) []string {
	bd, ok := o.(*rukpakv1alpha2.BundleDeployment)
	if !ok || !r.set.Classes.Claims(bd) || !bundlefiles.AdapterFetches(r.set.Classes.asBuiltin(bd)) {
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
func (r *BundleDeploymentReconciler) bundlesReading(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() != r.set.Config.SystemNamespace {
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

// referencesIndex indexes BundleDeployments by the Secrets and ConfigMaps
// they reference, when Apps are spread over app namespaces.
const referencesIndex = "rukpak-kapp.references"

// watchReferences keeps the copies current: a change of an original, or of
// a copy by hand, reconciles every BundleDeployment that references it.
func (r *BundleDeploymentReconciler) watchReferences(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	if len(r.set.Config.AppNamespaces) == 0 {
		return b, nil
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &rukpakv1alpha2.BundleDeployment{}, referencesIndex, r.referencesHeld)
	if err != nil {
		return nil, fmt.Errorf("index bundle deployments by reference: %w", err)
	}
	return b.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.referencing(true))).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.referencing(false))), nil
}

// referencesHeld are the Secrets and ConfigMaps of the system namespace a
// claimed BundleDeployment references, as referencesIndex keys them.
func (r *BundleDeploymentReconciler) referencesHeld(o client.Object) []string {
	bd, ok := o.(*rukpakv1alpha2.BundleDeployment)
	if !ok || !r.set.Classes.Claims(bd) {
		return nil
	}
	var keys []string
	for _, ref := range kube.References(r.set.Classes.asBuiltin(bd)) {
		keys = append(keys, ref.String())
	}
	return keys
}

// referencing maps a Secret (secret) or ConfigMap to the BundleDeployments
// that reference it.
func (r *BundleDeploymentReconciler) referencing(secret bool) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		list := &rukpakv1alpha2.BundleDeploymentList{}
		key := kube.Reference{Secret: secret, Name: o.GetName()}.String()
		if err := r.client.List(ctx, list, client.MatchingFields{referencesIndex: key}); err != nil {
			log.FromContext(ctx).Error(err, "list bundle deployments for a referenced object", "object", key)
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}

// ownerOf maps an installed object to the BundleDeployment that installed it.
func ownerOf(_ context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[rukpakv1alpha2.LabelOwnerKind] != rukpakv1alpha2.OwnerKind || l[rukpakv1alpha2.LabelOwnerName] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: l[rukpakv1alpha2.LabelOwnerName]}}}
}

// packageInstallApp maps an App a PackageInstall controls to the
// BundleDeployment of the same name: the serve mode's App is not bd's to
// own, yet its status is what bd reports.
func packageInstallApp(_ context.Context, o client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(o)
	if ref == nil || ref.Kind != "PackageInstall" || ref.APIVersion != packagingv1alpha1.SchemeGroupVersion.String() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
}

// AppKey names the App of the BundleDeployment bd (for drift repair).
func (r *BundleDeploymentReconciler) AppKey(ctx context.Context, bd string) (client.ObjectKey, bool) {
	if bd == "" {
		return client.ObjectKey{}, false
	}
	ns, err := r.placed.place(ctx, r.client, r.direct, r.set.Config, bd, r.kapp.Ready())
	if err != nil {
		return client.ObjectKey{}, false
	}
	return client.ObjectKey{Namespace: ns, Name: bd}, true
}

// customSource is the source of installed custom resources' events; one
// that never fires when none are judged.
func (r *BundleDeploymentReconciler) customSource() source.TypedSource[reconcile.Request] {
	if r.custom == nil {
		return source.Func(func(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request]) error { return nil })
	}
	return r.custom
}
