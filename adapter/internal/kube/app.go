package kube

import (
	"context"
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
)

// LiveApp is the App at key, nil when there is none. The informer cache may
// not have seen an App this adapter created a moment ago, and "no App"
// decides how one is made (a take-over, the style of its objects), so that
// answer is confirmed with the API server (direct).
func LiveApp(ctx context.Context, c client.Reader, direct client.Reader, key client.ObjectKey) (*kappctrlv1alpha1.App, error) {
	app := &kappctrlv1alpha1.App{}
	err := c.Get(ctx, key, app)
	if apierrors.IsNotFound(err) {
		err = direct.Get(ctx, key, app)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get App %s/%s: %w", key.Namespace, key.Name, err)
	}
	return app, nil
}

// ApplyApp writes the desired App only when it differs from the live one
// (nil: none), so an unchanged BundleDeployment costs no API writes.
func ApplyApp(ctx context.Context, c client.Client, desired, live *kappctrlv1alpha1.App) (*kappctrlv1alpha1.App, error) {
	if live != nil && appUpToDate(desired, live) {
		return live, nil
	}
	applied, err := ServerSideApply(ctx, c, desired)
	if err != nil {
		return nil, &scope.StepError{Step: scope.StepStore, Err: fmt.Errorf("apply App %s/%s: %w", desired.Namespace, desired.Name, err)}
	}
	return applied, nil
}

func appUpToDate(desired, live *kappctrlv1alpha1.App) bool {
	return HasMetadataOf(live, desired) && live.DeletionTimestamp.IsZero() &&
		apiequality.Semantic.DeepEqual(desired.OwnerReferences, live.OwnerReferences) &&
		apiequality.Semantic.DeepEqual(desired.Spec, live.Spec)
}

// HasMetadataOf says live carries every label and annotation of desired,
// with desired's values (what an apply of desired would not change).
func HasMetadataOf(live, desired metav1.Object) bool {
	for k, v := range desired.GetLabels() {
		if live.GetLabels()[k] != v {
			return false
		}
	}
	for k, v := range desired.GetAnnotations() {
		if live.GetAnnotations()[k] != v {
			return false
		}
	}
	return true
}

// DeployedCurrent reports whether kapp-controller deployed the App's
// current spec, so content it no longer reads can go.
func DeployedCurrent(app *kappctrlv1alpha1.App) bool {
	return app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
		app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded
}

// FailedCurrent says kapp-controller ran the App's current spec and failed.
func FailedCurrent(app *kappctrlv1alpha1.App) bool {
	return app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
		app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileFailed
}

// ServerSideApply applies the App as this adapter's field owner.
func ServerSideApply(ctx context.Context, c client.Client, app *kappctrlv1alpha1.App) (*kappctrlv1alpha1.App, error) {
	applied := &kappctrlv1alpha1.App{}
	return applied, ApplyAs(ctx, c, app, applied)
}

// ApplyAs applies obj as this adapter's field owner and reads the result
// into applied. kapp-controller's types have no generated apply
// configurations, so the typed object goes through unstructured, without
// status and server-set metadata.
func ApplyAs(ctx context.Context, c client.Client, obj, applied client.Object) error {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: raw}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldowner.Name), client.ForceOwnership); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, applied)
}
