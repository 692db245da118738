package store

import (
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// PackagesMetadata is the metadata of a Package, as the catalog Packages'
// cache holds it: a catalog Package's labels and annotations say all that
// dependencies are resolved with (catalog.OfferOf).
func PackagesMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(datav1alpha1.SchemeGroupVersion.WithKind("Package"))
	return m
}

// PackagesMetadataList is a list of PackagesMetadata.
func PackagesMetadataList() *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(datav1alpha1.SchemeGroupVersion.WithKind("PackageList"))
	return l
}

// CatalogPackagesSelector selects the Packages of catalogs, published by an
// OperatorCatalog or by a repository `catalog push` made: those that name
// their OLM package.
func CatalogPackagesSelector() labels.Selector {
	r, err := labels.NewRequirement(catalog.LabelPackage, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key
	}
	return labels.NewSelector().Add(*r)
}
