package kube

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
)

// DeleteLeaving deletes obj, an App or a PackageInstall (kind names it in
// errors), once its spec.noopDelete (noop points at it) says keep:
// kapp-controller reads the field when it deletes, so keep leaves every
// object obj installed in place, and !keep deletes them with it. The field
// is written first, with the resourceVersion read, so a delete never runs
// on a stale answer; a delete already under way is not asked again, and
// what is already gone is no error.
func DeleteLeaving(ctx context.Context, c client.Client, kind string, obj client.Object, noop *bool, keep bool) error {
	if *noop != keep {
		before := obj.DeepCopyObject().(client.Object)
		*noop = keep
		patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
		if err := c.Patch(ctx, obj, patch, client.FieldOwner(fieldowner.Name)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("set noopDelete=%t on %s %s/%s before deleting it: %w", keep, kind, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
