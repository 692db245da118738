package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Finalizer holds a BundleDeployment until its App, and with it everything
// it installed, is gone.
const Finalizer = "core.rukpak.io/uninstall"

// PatchFinalizers changes bd's finalizers with an optimistic lock: the
// patch carries the resourceVersion read, so a finalizer another controller
// added since is never dropped by a list written from a stale cache; the
// conflict is retried with backoff instead.
func PatchFinalizers(ctx context.Context, c client.Client, bd *rukpakv1alpha2.BundleDeployment, change func(client.Object, string) bool) error {
	before := bd.DeepCopy()
	if !change(bd, Finalizer) {
		return nil
	}
	return c.Patch(ctx, bd, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldowner.Name))
}

// Orphaning says the BundleDeployment's delete orphans its dependents:
// the garbage collector's orphan finalizer is still on it, or it already
// took the BundleDeployment's owner reference off its dependent o (which
// then has no controller left, but still the owner labels).
func Orphaning(bd *rukpakv1alpha2.BundleDeployment, o metav1.Object) bool {
	if controllerutil.ContainsFinalizer(bd, metav1.FinalizerOrphanDependents) {
		return true
	}
	return o != nil && metav1.GetControllerOf(o) == nil && o.GetLabels()[rukpakv1alpha2.LabelOwnerName] == bd.Name
}
