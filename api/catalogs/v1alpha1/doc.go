// Package v1alpha1 holds rukpak-kapp's own catalog API (group
// catalogs.rukpak-kapp.dev): an OperatorCatalog follows an OLM catalog
// image and has the adapter publish it as Carvel packages in its
// namespace (docs/catalogs.md).
//
// It imports nothing of the module: every other package may import it.
// +kubebuilder:object:generate=true
// +groupName=catalogs.rukpak-kapp.dev
package v1alpha1
