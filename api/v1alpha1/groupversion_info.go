// Package v1alpha1 holds rukpak's first API generation (rukpak up to
// v0.16.0, group core.rukpak.io): the cluster-scoped Bundle and the
// BundleDeployment whose spec.template describes the Bundle it generates.
// rukpak-kapp serves both unchanged beside v1alpha2; BundleDeployments are
// stored as v1alpha2 and converted (conversion.go).
// +kubebuilder:object:generate=true
// +groupName=core.rukpak.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the first API generation.
	GroupVersion = schema.GroupVersion{Group: "core.rukpak.io", Version: "v1alpha1"}
	// SchemeBuilder registers the API types with a runtime scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the API types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
