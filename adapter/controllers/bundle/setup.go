package bundle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/bundle/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// workers fetch side by side: a slow registry holds one, not all.
const workers = 4

// referencesIndex indexes Bundles by the ConfigMaps and Secrets their
// source reads (configmap/NAME, secret/NAME).
const referencesIndex = "unpacker.references"

// SetupWithManager watches Bundles on their own of the claimed classes,
// and the ConfigMaps and Secrets of the system namespace they read: one
// that appears or changes unpacks the Bundles that read it again at once.
func (u *Unpacker) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &rukpakv1alpha1.Bundle{}, referencesIndex, references); err != nil {
		return fmt.Errorf("index Bundles by what they read: %w", err)
	}
	mine := func(o client.Object) bool {
		b, ok := o.(*rukpakv1alpha1.Bundle)
		if !ok {
			return false
		}
		_, claimed := u.source.classes[b.Spec.ProvisionerClassName]
		return claimed && !plan.Generated(b)
	}
	// A fetch that outlived its reconcile queues its Bundle when it ends.
	u.fetches.requeue = u.queue
	return ctrl.NewControllerManagedBy(mgr).
		Named("bundle").
		For(&rukpakv1alpha1.Bundle{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(e event.CreateEvent) bool { return mine(e.Object) },
			DeleteFunc: func(e event.DeleteEvent) bool { return true },
			// Its own status writes are no news: a Bundle's spec never
			// changes, so what matters is a Bundle that stops or starts
			// being a BundleDeployment's, or goes.
			UpdateFunc: func(e event.UpdateEvent) bool {
				if !mine(e.ObjectNew) {
					return false
				}
				return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() || plan.Generated(e.ObjectOld.(*rukpakv1alpha1.Bundle)) ||
					!e.ObjectNew.GetDeletionTimestamp().Equal(e.ObjectOld.GetDeletionTimestamp())
			},
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		WatchesRawSource(source.Channel(u.queued, &handler.EnqueueRequestForObject{})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(u.reading("configmap"))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(u.reading("secret"))).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](fetch.RetryBase, fetch.RetryMax),
		}).
		Complete(u)
}

// queue has the Bundle name reconciled again now.
func (u *Unpacker) queue(ctx context.Context, name string) {
	b := &rukpakv1alpha1.Bundle{}
	b.Name = name
	select {
	case u.queued <- event.GenericEvent{Object: b}:
	case <-ctx.Done():
	}
}

// EnqueueUnpackFailed has every Bundle whose unpack failed reconciled again
// now, not at the end of its backoff: what it failed on
// (kapp-controller-config's CAs or proxies) changed.
func (u *Unpacker) EnqueueUnpackFailed(ctx context.Context, c client.Reader) error {
	// Every fetch that failed may pass now: none waits out its backoff
	// (forgotten before any is queued, so none is looked at with it).
	u.retries.ForgetAll()
	return kube.EnqueueMatching(ctx, c, &rukpakv1alpha1.BundleList{}, func(b *rukpakv1alpha1.Bundle) bool {
		return status.UnpackFailed(b.Status.Conditions)
	}, u.queued)
}

// references is what a Bundle's source reads from the system namespace.
func references(o client.Object) []string {
	b, ok := o.(*rukpakv1alpha1.Bundle)
	if !ok || plan.Generated(b) {
		return nil
	}
	src := b.Spec.Source
	var out []string
	if src.Image != nil && src.Image.ImagePullSecretName != "" {
		out = append(out, "secret/"+src.Image.ImagePullSecretName)
	}
	if src.Git != nil && src.Git.Auth.Secret.Name != "" {
		out = append(out, "secret/"+src.Git.Auth.Secret.Name)
	}
	if src.HTTP != nil && src.HTTP.Auth.Secret.Name != "" {
		out = append(out, "secret/"+src.HTTP.Auth.Secret.Name)
	}
	for _, cm := range src.ConfigMaps {
		out = append(out, "configmap/"+cm.ConfigMap.Name)
	}
	return out
}

// reading maps a ConfigMap or Secret of the system namespace to the
// Bundles that read it.
func (u *Unpacker) reading(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		if o.GetNamespace() != u.source.systemNamespace {
			return nil
		}
		list := &rukpakv1alpha1.BundleList{}
		if err := u.client.List(ctx, list, client.MatchingFields{referencesIndex: kind + "/" + o.GetName()}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, b := range list.Items {
			// What it read changed: a failure it left is not waited out.
			u.retries.Forget(b.Name)
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
		}
		return out
	}
}
