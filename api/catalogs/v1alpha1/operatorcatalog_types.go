package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorCatalogSpec names the catalog image to follow.
type OperatorCatalogSpec struct {
	// Image is the catalog image: its file-based catalog under the directory
	// its label operators.operatorframework.io.index.configs.v1 names
	// (/configs without one), as opm builds catalog images. A tag is looked
	// up every pollInterval; a new digest is published again.
	// +kubebuilder:validation:MinLength:=1
	Image string `json:"image"`
	// Domain ends every refName: <channel>.<package>.<domain>
	// (operators.rukpak-kapp.dev when empty).
	// +optional
	Domain string `json:"domain,omitempty"`
	// PollInterval is how often the tag is looked up (default 10m, at
	// least 10s).
	// +optional
	PollInterval *metav1.Duration `json:"pollInterval,omitempty"`
	// PullSecret names a kubernetes.io/dockerconfigjson Secret in the
	// OperatorCatalog's namespace with the credentials of a private
	// registry, as an image's pullSecret is named elsewhere in the API. The
	// adapter reads that Secret and no other of the namespace, and only
	// where the namespace binds the ClusterRole
	// rukpak-kapp-catalog-pull-secrets (config/catalogs) to it.
	// +optional
	PullSecret string `json:"pullSecret,omitempty"`
}

// OperatorCatalogStatus says what was published.
type OperatorCatalogStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ResolvedImage is the catalog image published last, by digest.
	// +optional
	ResolvedImage string `json:"resolvedImage,omitempty"`
	// Packages and PackageMetadatas count what the catalog publishes and
	// is in place: written by it or found as it wrote them (a Package
	// another OperatorCatalog publishes is not counted).
	// +optional
	Packages int32 `json:"packages,omitempty"`
	// +optional
	PackageMetadatas int32 `json:"packageMetadatas,omitempty"`
	// Refused lists what of the catalog could not be published, and why
	// (the first 20).
	// +optional
	Refused []string `json:"refused,omitempty"`
	// Conditions: Published.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TypePublished is True once the catalog's current image is published.
const TypePublished = "Published"

// Reasons of the Published condition.
const (
	ReasonPublished   = "Published"
	ReasonPullFailed  = "PullFailed"
	ReasonInvalid     = "InvalidCatalog"
	ReasonWriteFailed = "WriteFailed"
	// ReasonConflict: some of the catalog's Packages or PackageMetadatas
	// are already published by another OperatorCatalog in the namespace,
	// which keeps them; the rest is published.
	ReasonConflict = "Conflict"
	// ReasonPackagingAPIUnavailable: kapp-controller's packaging API is
	// not served (kapp-controller stopped or not installed), so nothing of
	// the catalog can be published or withdrawn; it is as soon as the API
	// is back.
	ReasonPackagingAPIUnavailable = "PackagingAPIUnavailable"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Published",type=string,JSONPath=`.status.conditions[?(@.type=="Published")].status`
// +kubebuilder:printcolumn:name="Packages",type=integer,JSONPath=`.status.packages`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// OperatorCatalog publishes an OLM catalog image as Carvel packages in its
// namespace, and publishes it again when its tag moves.
type OperatorCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OperatorCatalogSpec   `json:"spec"`
	Status OperatorCatalogStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OperatorCatalogList is a list of OperatorCatalogs.
type OperatorCatalogList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorCatalog `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OperatorCatalog{}, &OperatorCatalogList{})
}
