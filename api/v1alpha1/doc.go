// Package v1alpha1 holds rukpak's first API generation (rukpak up to
// v0.16.0, group core.rukpak.io): the cluster-scoped Bundle and the
// BundleDeployment whose spec.template describes the Bundle it generates.
// rukpak-kapp serves both unchanged alongside v1alpha2; BundleDeployments are
// stored as v1alpha2 and converted (conversion.go).
//
// It may import api/v1alpha2 (its conversion hub) and nothing else of the module.
// +kubebuilder:object:generate=true
// +groupName=core.rukpak.io
package v1alpha1
