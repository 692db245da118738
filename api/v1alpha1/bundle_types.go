package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BundleSpec is what a Bundle holds: a source and the provisioner class
// that unpacks it. A BundleDeployment's template carries one too.
type BundleSpec struct {
	// ProvisionerClassName selects the provisioner that unpacks the bundle:
	// core-rukpak-io-plain, core-rukpak-io-registry or core-rukpak-io-helm.
	// +kubebuilder:validation:Pattern:=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
	ProvisionerClassName string `json:"provisionerClassName"`
	// Source is where the bundle comes from.
	Source BundleSource `json:"source"`
}

// BundleStatus is what the provisioner observed of the Bundle's content.
type BundleStatus struct {
	// Phase is Pending, Unpacking, Unpacked or Failing.
	Phase string `json:"phase,omitempty"`
	// ResolvedSource is the source pinned to what was unpacked (image digest, git commit).
	ResolvedSource *BundleSource `json:"resolvedSource,omitempty"`
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Unpacked.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ContentURL is where the unpacked content is served, as a gzipped tarball, to
	// bearer tokens that may get it.
	ContentURL string `json:"contentURL,omitempty"`
}

// Bundle is one immutable piece of content, usually generated from a
// BundleDeployment's template.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Type,type=string,JSONPath=`.spec.source.type`
// +kubebuilder:printcolumn:name=Phase,type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name=Provisioner,type=string,JSONPath=`.spec.provisionerClassName`,priority=1
// +kubebuilder:printcolumn:name=Resolved Source,type=string,JSONPath=`.status.resolvedSource`,priority=1
type Bundle struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is immutable. The rules are what rukpak v0.16's validating
	// webhook checked for Bundles, with its messages. They sit on this field,
	// not on BundleSpec, because a BundleDeployment's template carries a
	// BundleSpec that rukpak did not check until it made the Bundle.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="bundle.spec is immutable"
	// +kubebuilder:validation:XValidation:rule="self.source.type != 'image' || has(self.source.image)",message="bundle.spec.source.image must be set for source type \"image\"",fieldPath=".source"
	// +kubebuilder:validation:XValidation:rule="self.source.type != 'git' || has(self.source.git)",message="bundle.spec.source.git must be set for source type \"git\"",fieldPath=".source"
	// +kubebuilder:validation:XValidation:rule="self.source.type != 'git' || !has(self.source.git) || !has(self.source.git.directory) || !(self.source.git.directory == '..' || self.source.git.directory.startsWith('../') || self.source.git.directory.endsWith('/..') || self.source.git.directory.contains('/../'))",message="bundle.spec.source.git.directory begins with \"../\": directory must define path within the repository",fieldPath=".source.git.directory"
	// +kubebuilder:validation:XValidation:rule="self.source.type != 'configMaps' || (has(self.source.configMaps) && size(self.source.configMaps) > 0)",message="bundle.spec.source.configmaps must be set for source type \"configmaps\"",fieldPath=".source"
	// +kubebuilder:validation:XValidation:rule="self.source.type != 'configMaps' || !has(self.source.configMaps) || self.source.configMaps.all(c, !has(c.path) || !(c.path.startsWith('/') || c.path == '..' || c.path.startsWith('../') || c.path.endsWith('/..') || c.path.contains('/../')))",message="bundle.spec.source.configmaps[].path is invalid: the path is outside bundle root",fieldPath=".source.configMaps"
	Spec   BundleSpec   `json:"spec"`
	Status BundleStatus `json:"status,omitempty"`
}

// BundleList is a list of Bundles.
// +kubebuilder:object:root=true
type BundleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Bundle `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Bundle{}, &BundleList{})
}
