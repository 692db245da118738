package adapter

import (
	"context"
	"fmt"
	"strconv"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyApp writes the desired App only when it differs from the live one
// (nil: none), so an unchanged BundleDeployment costs no API writes.
func (r *Reconciler) applyApp(ctx context.Context, desired, live *kappctrlv1alpha1.App) (*kappctrlv1alpha1.App, error) {
	if live != nil && appUpToDate(desired, live) {
		return live, nil
	}
	applied, err := serverSideApply(ctx, r.client, desired)
	if err != nil {
		return nil, &stepError{step: stepStore, err: fmt.Errorf("apply App %s/%s: %w", desired.Namespace, desired.Name, err)}
	}
	return applied, nil
}

func appUpToDate(desired, live *kappctrlv1alpha1.App) bool {
	for k, v := range desired.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	for k, v := range desired.Annotations {
		if live.Annotations[k] != v {
			return false
		}
	}
	return live.DeletionTimestamp.IsZero() &&
		apiequality.Semantic.DeepEqual(desired.OwnerReferences, live.OwnerReferences) &&
		apiequality.Semantic.DeepEqual(desired.Spec, live.Spec)
}

// deployedCurrent reports whether kapp-controller deployed the App's
// current spec, so content it no longer reads can go.
func deployedCurrent(app *kappctrlv1alpha1.App) bool {
	return app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
		app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded
}

// serverSideApply applies the App as this adapter's field owner.
func serverSideApply(ctx context.Context, c client.Client, app *kappctrlv1alpha1.App) (*kappctrlv1alpha1.App, error) {
	applied := &kappctrlv1alpha1.App{}
	return applied, applyAs(ctx, c, app, applied)
}

// applyAs applies obj as this adapter's field owner and reads the result
// into applied. kapp-controller's types have no generated apply
// configurations, so the typed object goes through unstructured, without
// status and server-set metadata.
func applyAs(ctx context.Context, c client.Client, obj, applied client.Object) error {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: raw}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, applied)
}

func formatGeneration(gen int64) string { return strconv.FormatInt(gen, 10) }
