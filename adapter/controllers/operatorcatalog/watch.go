package operatorcatalog

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// SetupWithManager registers the controller (leader only), watching in c
// (the catalogs' cache: every namespace) the OperatorCatalogs and the
// metadata of the Packages and PackageMetadatas catalogs published.
// kapp-controller's packaging API keeps no ownerReferences' promise of its
// own (its objects are translated to InternalPackages, and only a garbage
// collector that discovers the aggregated API would act on them), so the
// catalog watches what it wrote instead: an object deleted or edited by hand
// is written again within seconds, and one released by the catalog that kept
// it is taken up by the one that wanted it.
//
// installs is the cache of OperatorInstalls: an install whose status says
// it moved off a retracted Package wakes its catalog.
func (r *OperatorCatalogReconciler) SetupWithManager(mgr ctrl.Manager, c, installs cache.Cache) error {
	queue := &handler.TypedEnqueueRequestForObject[*catalogsv1alpha1.OperatorCatalog]{}
	return ctrl.NewControllerManagedBy(mgr).Named("operatorcatalogs").
		// Its own status write and finalizer are no news to it.
		WatchesRawSource(source.Kind(c, &catalogsv1alpha1.OperatorCatalog{}, queue, predicate.TypedGenerationChangedPredicate[*catalogsv1alpha1.OperatorCatalog]{})).
		WatchesRawSource(source.Kind(c, metadataOf(kindPackage), r.onPublished(kindPackage))).
		WatchesRawSource(source.Kind(c, metadataOf(kindMetadata), r.onPublished(kindMetadata))).
		// An install that moves off a retracted Package lets its catalog
		// withdraw it: its status says another version is installed, or its
		// BundleDeployment installs another.
		WatchesRawSource(source.Kind(installs, &catalogsv1alpha1.OperatorInstall{}, handler.TypedEnqueueRequestsFromMapFunc(onInstall[*catalogsv1alpha1.OperatorInstall](r)), installMovedOff())).
		WatchesRawSource(source.Kind(mgr.GetCache(), &rukpakv1alpha2.BundleDeployment{}, handler.TypedEnqueueRequestsFromMapFunc(onInstall[*rukpakv1alpha2.BundleDeployment](r)), movedOff())).
		// An outage of the packaging API, and its end, concern every
		// catalog.
		WatchesRawSource(source.Channel(r.served.Changes(), handler.EnqueueRequestsFromMapFunc(r.everyCatalog))).
		// What fails other than the registry (a write) backs off as every
		// other retry of the adapter, not from controller-runtime's 5 ms.
		WithOptions(controller.Options{MaxConcurrentReconciles: workers,
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](fetch.RetryBase, fetch.RetryMax)}).
		Complete(r)
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// everyCatalog maps an event to every OperatorCatalog.
func (r *OperatorCatalogReconciler) everyCatalog(ctx context.Context, _ client.Object) []reconcile.Request {
	var list catalogsv1alpha1.OperatorCatalogList
	if err := r.cached.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "list the OperatorCatalogs to say the packaging API's state")
		return nil
	}
	out := make([]reconcile.Request, len(list.Items))
	for i, cat := range list.Items {
		out[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: cat.Namespace, Name: cat.Name}}
	}
	return out
}

// onPublished queues the catalogs a change of a published object concerns.
func (r *OperatorCatalogReconciler) onPublished(kind string) handler.TypedEventHandler[*metav1.PartialObjectMetadata, reconcile.Request] {
	return handler.TypedFuncs[*metav1.PartialObjectMetadata, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*metav1.PartialObjectMetadata], q queue) {
			r.changed(kind, e.Object, false, q)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*metav1.PartialObjectMetadata], q queue) {
			r.changed(kind, e.ObjectNew, false, q)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*metav1.PartialObjectMetadata], q queue) {
			r.changed(kind, e.Object, true, q)
		},
	}
}

// changed marks o dirty in every publication of its namespace it differs
// from (deleted, edited since written, or released by the catalog that
// kept it), and queues those catalogs; the catalog its label names is
// queued when nothing of it is kept (the adapter restarted: it is
// published whole). A catalog's own writes come back with the
// resourceVersion it recorded, and queue nothing.
func (r *OperatorCatalogReconciler) changed(kind string, o *metav1.PartialObjectMetadata, deleted bool, q queue) {
	k := objKey{kind, o.Name}
	owner := o.Labels[LabelCatalog]
	r.mu.Lock()
	defer r.mu.Unlock()
	ownerKept := false
	for id, p := range r.kept {
		if id.Namespace != o.Namespace {
			continue
		}
		ownerKept = ownerKept || id.Name == owner
		e := p.objects[k]
		if e == nil {
			continue
		}
		var differs bool
		if e.conflict != "" {
			differs = deleted || owner != e.conflict
		} else {
			differs = deleted || owner != id.Name || e.rv != o.ResourceVersion
		}
		if deleted {
			p.gone[k] = true
		}
		if differs {
			p.dirty[k] = true
			q.Add(reconcile.Request{NamespacedName: id})
		}
	}
	if owner != "" && !ownerKept && !deleted {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: owner}})
	}
}

// onInstall is r.onInstall for events of objects of type T.
func onInstall[T client.Object](r *OperatorCatalogReconciler) handler.TypedMapFunc[T, reconcile.Request] {
	return func(ctx context.Context, o T) []reconcile.Request { return r.onInstall(ctx, o) }
}

// movedOff passes the events of a catalog BundleDeployment that leaves an
// entry: the bundle it names changed, or it is gone.
func movedOff() predicate.TypedPredicate[*rukpakv1alpha2.BundleDeployment] {
	return predicate.TypedFuncs[*rukpakv1alpha2.BundleDeployment]{
		CreateFunc:  func(event.TypedCreateEvent[*rukpakv1alpha2.BundleDeployment]) bool { return false },
		GenericFunc: func(event.TypedGenericEvent[*rukpakv1alpha2.BundleDeployment]) bool { return false },
		UpdateFunc: func(e event.TypedUpdateEvent[*rukpakv1alpha2.BundleDeployment]) bool {
			return e.ObjectOld.Labels[catalog.LabelPackage] != "" &&
				(e.ObjectOld.Annotations[catalog.AnnotationBundle] != e.ObjectNew.Annotations[catalog.AnnotationBundle] ||
					e.ObjectOld.Labels[catalog.LabelPackage] != e.ObjectNew.Labels[catalog.LabelPackage])
		},
		DeleteFunc: func(e event.TypedDeleteEvent[*rukpakv1alpha2.BundleDeployment]) bool {
			return e.Object.Labels[catalog.LabelPackage] != ""
		},
	}
}

// installMovedOff passes the events of an OperatorInstall whose status
// says another version is installed, or that is gone.
func installMovedOff() predicate.TypedPredicate[*catalogsv1alpha1.OperatorInstall] {
	installed := func(oi *catalogsv1alpha1.OperatorInstall) string {
		if oi.Status.Installed == nil {
			return ""
		}
		return oi.Status.Installed.Bundle
	}
	return predicate.TypedFuncs[*catalogsv1alpha1.OperatorInstall]{
		CreateFunc:  func(event.TypedCreateEvent[*catalogsv1alpha1.OperatorInstall]) bool { return false },
		GenericFunc: func(event.TypedGenericEvent[*catalogsv1alpha1.OperatorInstall]) bool { return false },
		UpdateFunc: func(e event.TypedUpdateEvent[*catalogsv1alpha1.OperatorInstall]) bool {
			return installed(e.ObjectOld) != installed(e.ObjectNew)
		},
		DeleteFunc: func(event.TypedDeleteEvent[*catalogsv1alpha1.OperatorInstall]) bool { return true },
	}
}
