package operatorcatalog

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// unpublish withdraws exactly what cat published (its label; never what
// another catalog keeps), then lets it go. Another catalog that wanted
// the same objects is woken by their deletes and publishes them.
func (r *OperatorCatalogReconciler) unpublish(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog) error {
	if !controllerutil.ContainsFinalizer(cat, Finalizer) {
		return nil
	}
	published, err := r.published(ctx, cat)
	if err != nil {
		return err
	}
	var failed []string
	for _, o := range published {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, o)); err != nil {
			failed = append(failed, packagingapi.Error("delete "+o.GetObjectKind().GroupVersionKind().Kind+" "+o.GetName(), err).Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("withdraw what OperatorCatalog %s/%s published: %s", cat.Namespace, cat.Name, strings.Join(failed, "; "))
	}
	patch := client.MergeFrom(cat.DeepCopy())
	controllerutil.RemoveFinalizer(cat, Finalizer)
	if err := r.client.Patch(ctx, cat, patch, client.FieldOwner(fieldowner.Name)); err != nil {
		return fmt.Errorf("remove the finalizer of OperatorCatalog %s/%s: %w", cat.Namespace, cat.Name, err)
	}
	r.forget(types.NamespacedName{Namespace: cat.Namespace, Name: cat.Name})
	log.FromContext(ctx).Info("withdrew an OperatorCatalog's packages and package metadatas", "objects", len(published))
	return nil
}

// published lists what cat published, directly (the cache may not yet
// hold what it wrote last) and as metadata only: the Packages and
// PackageMetadatas in its namespace with its label (kapp-controller's API
// adds those of its global packaging namespace to every namespace's list;
// they are not cat's).
func (r *OperatorCatalogReconciler) published(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog) ([]client.Object, error) {
	var out []client.Object
	for _, kind := range []string{kindMetadata, kindPackage} {
		list := metadataListOf(kind)
		if err := r.direct.List(ctx, list, client.InNamespace(cat.Namespace), client.MatchingLabels{LabelCatalog: cat.Name}); err != nil {
			return nil, packagingapi.Error(fmt.Sprintf("list the %ss OperatorCatalog %s/%s published", kind, cat.Namespace, cat.Name), err)
		}
		for i := range list.Items {
			if list.Items[i].Namespace == cat.Namespace {
				o := &list.Items[i]
				o.SetGroupVersionKind(metadataOf(kind).GroupVersionKind())
				out = append(out, o)
			}
		}
	}
	return out, nil
}
