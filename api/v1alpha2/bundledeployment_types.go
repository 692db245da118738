package v1alpha2

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BundleDeploymentSpec is what the user asks for: a bundle from a source,
// installed by the provisioner named by its class.
//
// The rules below are what rukpak's validating webhook checked. They sit on
// the spec rather than on the shared source type so that status, which
// reuses that type, carries no rules.
// +kubebuilder:validation:XValidation:rule="self.source.type != 'image' || has(self.source.image)",message="bundledeployment.spec.source.image must be set for source type \"image\"",fieldPath=".source"
// +kubebuilder:validation:XValidation:rule="self.source.type != 'git' || has(self.source.git)",message="bundledeployment.spec.source.git must be set for source type \"git\"",fieldPath=".source"
// +kubebuilder:validation:XValidation:rule="self.source.type != 'configMaps' || (has(self.source.configMaps) && size(self.source.configMaps) > 0)",message="bundledeployment.spec.source.configmaps must be set for source type \"configmaps\"",fieldPath=".source"
// +kubebuilder:validation:XValidation:rule="!has(self.source.git) || !has(self.source.git.directory) || !(self.source.git.directory == '..' || self.source.git.directory.startsWith('../') || self.source.git.directory.endsWith('/..') || self.source.git.directory.contains('/../'))",message="directory begins with \"../\": directory must define path within the repository",fieldPath=".source.git.directory"
type BundleDeploymentSpec struct {
	// InstallNamespace receives the bundle's namespaced objects that name no
	// namespace. It must exist.
	// +kubebuilder:validation:MaxLength:=63
	// +kubebuilder:validation:Pattern:=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
	InstallNamespace string `json:"installNamespace"`

	// ProvisionerClassName selects the provisioner: core-rukpak-io-plain,
	// core-rukpak-io-registry or core-rukpak-io-helm.
	// +kubebuilder:validation:Pattern:=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
	ProvisionerClassName string `json:"provisionerClassName"`

	// Source is where the bundle comes from.
	Source BundleSource `json:"source"`

	// Config holds provisioner specific settings (helm: values).
	// +kubebuilder:validation:XPreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Config *apiextensionsv1.JSON `json:"config,omitempty"`

	// Preflight configures checks run before an install or upgrade.
	Preflight *PreflightConfig `json:"preflight,omitempty"`
}

// PreflightConfig groups the preflight checks.
type PreflightConfig struct {
	// CRDUpgradeSafety configures the CRD upgrade safety check.
	CRDUpgradeSafety *CRDUpgradeSafetyPreflightConfig `json:"crdUpgradeSafety,omitempty"`
}

// CRDUpgradeSafetyPreflightConfig turns the CRD upgrade safety check off.
type CRDUpgradeSafetyPreflightConfig struct {
	// Disabled turns the check off.
	Disabled bool `json:"disabled,omitempty"`
}

// BundleDeploymentStatus is what the provisioner observed.
type BundleDeploymentStatus struct {
	// Conditions: Unpacked, HasValidBundle, Installed, Healthy.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ResolvedSource is the source pinned to what was deployed (image digest, git commit).
	ResolvedSource *BundleSource `json:"resolvedSource,omitempty"`
	// ContentURL is where the content resolvedSource names is served, as a gzipped
	// tarball, to bearer tokens that may get it.
	ContentURL string `json:"contentURL,omitempty"`
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// BundleDeployment installs one bundle into the cluster.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={"bd","bds"}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Install State",type=string,JSONPath=`.status.conditions[?(.type=="Installed")].reason`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name=Provisioner,type=string,JSONPath=`.spec.provisionerClassName`,priority=1
// +kubebuilder:printcolumn:name=Upgrade,type=string,JSONPath=`.status.conditions[?(.type=="UpgradeAvailable")].reason`,priority=1
// +kubebuilder:printcolumn:name=Health,type=string,JSONPath=`.status.conditions[?(.type=="Healthy")].reason`,priority=1
type BundleDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BundleDeploymentSpec   `json:"spec"`
	Status BundleDeploymentStatus `json:"status,omitempty"`
}

// BundleDeploymentList is a list of BundleDeployments.
// +kubebuilder:object:root=true
type BundleDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BundleDeployment `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BundleDeployment{}, &BundleDeploymentList{})
}
