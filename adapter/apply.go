package adapter

import (
	"context"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// serverSideApply applies the App as this adapter's field owner. The App
// types have no generated apply configurations, so the typed object goes
// through unstructured, without status and server-set metadata.
func serverSideApply(ctx context.Context, c client.Client, app *kappctrlv1alpha1.App) (*kappctrlv1alpha1.App, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: raw}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return nil, err
	}
	applied := &kappctrlv1alpha1.App{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, applied); err != nil {
		return nil, err
	}
	return applied, nil
}
