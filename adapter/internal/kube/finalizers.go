package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Finalizer holds a BundleDeployment until its App, and with it everything
// it installed, is gone.
const Finalizer = "core.rukpak.io/uninstall"

// PatchFinalizers changes obj's finalizers (a BundleDeployment's: change is
// told the adapter's Finalizer) with an optimistic lock: the patch carries
// the resourceVersion read, so a finalizer another controller added since
// is never dropped by a list written from a stale cache; the conflict is
// retried with backoff instead.
func PatchFinalizers(ctx context.Context, c client.Client, obj client.Object, change func(client.Object, string) bool) error {
	before := obj.DeepCopyObject().(client.Object)
	if !change(obj, Finalizer) {
		return nil
	}
	return c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldowner.Name))
}

// ReleaseBundleFromRukpak takes rukpak v0.16's finalizer off a Bundle
// rukpak made or unpacked: it deleted rukpak's cached copy of the content,
// and with rukpak gone it would hold the Bundle's deletion forever. A
// Bundle gone meanwhile is no error.
func ReleaseBundleFromRukpak(ctx context.Context, c client.Client, b *rukpakv1alpha1.Bundle) error {
	err := PatchFinalizers(ctx, c, b, func(o client.Object, _ string) bool { return takeover.StripRukpakFinalizers(o) })
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove rukpak's finalizer from the Bundle %s: %w", b.Name, err)
	}
	return nil
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
