package adapter

import (
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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
	claimed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		bd, ok := o.(*rukpakv1alpha2.BundleDeployment)
		return ok && r.classes.Has(bd.Spec.ProvisionerClassName)
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("bundledeployment").
		For(&rukpakv1alpha2.BundleDeployment{}, builder.WithPredicates(claimed)).
		Owns(&kappctrlv1alpha1.App{}).
		// Content Secrets: one deleted by hand is recreated at once.
		Owns(&corev1.Secret{}).
		WithOptions(controller.Options{
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](backoffBase, backoffMax),
		}).
		Complete(r)
}
