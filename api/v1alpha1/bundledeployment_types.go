package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BundleDeploymentSpec is what the user asks for: the Bundle its template
// describes, installed by the provisioner its class names.
type BundleDeploymentSpec struct {
	// ProvisionerClassName selects the provisioner that installs the Bundle.
	// A registry+v1 bundle is installed by core-rukpak-io-plain from a
	// template of class core-rukpak-io-registry.
	// +kubebuilder:validation:Pattern:=^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
	ProvisionerClassName string `json:"provisionerClassName"`
	// Template describes the Bundle this BundleDeployment generates.
	Template BundleTemplate `json:"template"`
	// Config holds provisioner specific settings (helm: values).
	// +kubebuilder:validation:XPreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Config *apiextensionsv1.JSON `json:"config,omitempty"`
}

// BundleTemplate is the metadata and spec of the generated Bundle. Any
// change to it makes a new Bundle.
type BundleTemplate struct {
	// Labels and annotations are copied to the generated Bundle.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the generated Bundle's spec.
	Spec BundleSpec `json:"spec"`
}

// BundleDeploymentStatus is what the provisioner observed.
type BundleDeploymentStatus struct {
	// Conditions: HasValidBundle, Installed, Healthy.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ActiveBundle is the generated Bundle that was installed last.
	ActiveBundle string `json:"activeBundle,omitempty"`
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// BundleDeployment installs the Bundle its template describes.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={"bd","bds"}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Active Bundle",type=string,JSONPath=`.status.activeBundle`
// +kubebuilder:printcolumn:name="Install State",type=string,JSONPath=`.status.conditions[?(.type=="Installed")].reason`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name=Provisioner,type=string,JSONPath=`.spec.provisionerClassName`,priority=1
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
