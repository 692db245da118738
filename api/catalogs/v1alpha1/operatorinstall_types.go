package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorInstallSpec is what a catalog Package's template asks for: the
// bundle kapp-controller picked from the channel, and the install's values.
// An OperatorInstall is made by the App of a PackageInstall of a catalog
// Package (kctrl package install), with the PackageInstall's name and
// namespace; its controller installs the bundle through one
// BundleDeployment, one edge of the channel at a time.
type OperatorInstallSpec struct {
	// PackageName is the OLM package.
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=253
	PackageName string `json:"packageName"`
	// Channel is the OLM channel the install follows.
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=253
	Channel string `json:"channel"`
	// RefName is the refName of the channel's Packages
	// (<channel>.<package>.<domain>), read as kapp-controller shows them
	// to this namespace (its own and the global packaging namespace's): the
	// channel's graph, which every move follows.
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=253
	RefName string `json:"refName"`
	// Version is the OLM version of the bundle kapp-controller picked (the
	// Package the PackageInstall's constraint matches).
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=128
	Version string `json:"version"`
	// Bundle is the name of that bundle in the catalog.
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=253
	Bundle string `json:"bundle"`
	// Image is that bundle's image, as its Package names it (kbld pins it
	// to the copy of a relocated package repository).
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=1024
	Image string `json:"image"`
	// Format is the bundle's media type: registry+v1 (the default) or
	// plain+v0.
	// +kubebuilder:validation:Enum:=registry+v1;plain+v0
	// +kubebuilder:default:=registry+v1
	// +optional
	Format string `json:"format,omitempty"`
	// InstallNamespace is the namespace the bundle is installed into.
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=63
	// +kubebuilder:validation:Pattern:=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	InstallNamespace string `json:"installNamespace"`
	// WatchNamespaces are the namespaces the operator watches (a
	// registry+v1 bundle only). Empty: all namespaces when the bundle
	// supports that, else its own; [""] alone: all namespaces.
	// +kubebuilder:validation:MaxItems:=64
	// +kubebuilder:validation:items:MaxLength:=63
	// +optional
	WatchNamespaces []string `json:"watchNamespaces,omitempty"`
	// ServiceAccountName names a ServiceAccount of the adapter's system
	// namespace that kapp installs the bundle with, instead of the
	// installer account ("": the installer account).
	// +kubebuilder:validation:MaxLength:=253
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// BundleDeploymentName names the BundleDeployment the install writes
	// ("": <name>.<namespace> of the OperatorInstall).
	// +kubebuilder:validation:MaxLength:=52
	// +optional
	BundleDeploymentName string `json:"bundleDeploymentName,omitempty"`
	// UpgradeConstraintPolicy is CatalogProvided (the default: a move
	// follows the channel's edges, one at a time) or SelfCertified (any
	// version, at once), as operator-controller names them.
	// +kubebuilder:validation:Enum:=CatalogProvided;SelfCertified
	// +kubebuilder:default:=CatalogProvided
	// +optional
	UpgradeConstraintPolicy string `json:"upgradeConstraintPolicy,omitempty"`
	// UpgradeApproval is Automatic (the default) or Manual: a move to a
	// version approvedVersion does not name is held, the version installed
	// running meanwhile, as OLM v0's installPlanApproval: Manual. Whoever
	// may update the OperatorInstall (RBAC) may approve.
	// +kubebuilder:validation:Enum:=Automatic;Manual
	// +kubebuilder:default:=Automatic
	// +optional
	UpgradeApproval string `json:"upgradeApproval,omitempty"`
	// ApprovedVersion is, with upgradeApproval Manual, the one version a
	// move may go to (its OLM or its Package version).
	// +kubebuilder:validation:MaxLength:=128
	// +optional
	ApprovedVersion string `json:"approvedVersion,omitempty"`
	// InstallDependencies installs what the bundle requires
	// (olm.package.required, olm.gvk.required) from the catalog as
	// PackageInstalls of their own (the default); false only waits until
	// the cluster meets it.
	// +kubebuilder:default:=true
	// +optional
	InstallDependencies *bool `json:"installDependencies,omitempty"`
	// HealthExpressions are CEL expressions that judge installed objects of
	// kinds that follow no convention: a YAML list of {apiVersion, kind,
	// inProgress, failed, current}, set on the BundleDeployment
	// (core.rukpak.io/health-expressions).
	// +kubebuilder:validation:MaxLength:=16384
	// +optional
	HealthExpressions string `json:"healthExpressions,omitempty"`
	// StepHealthTimeout bounds how long a walk's deployed step may stay
	// not healthy before the walk stops there ("": the adapter's
	// --upgrade-step-health-timeout).
	// +optional
	StepHealthTimeout *metav1.Duration `json:"stepHealthTimeout,omitempty"`
}

// BundleVersion names one bundle of the channel.
type BundleVersion struct {
	// Bundle is its name in the catalog.
	Bundle string `json:"bundle"`
	// Version is its OLM version.
	Version string `json:"version"`
}

// WalkStatus is where a move along the channel, one edge at a time, is.
type WalkStatus struct {
	// Path are the versions of the walk, the one installed when it began
	// first and the one asked for last.
	Path []string `json:"path"`
	// Step indexes Path: the version the BundleDeployment installs now.
	Step int32 `json:"step"`
	// StepStarted is when that step was written.
	// +optional
	StepStarted *metav1.Time `json:"stepStarted,omitempty"`
}

// Dependency is one package the bundle requires that the catalog meets.
type Dependency struct {
	// Package is the OLM package (or, for an API, the package that
	// provides it).
	Package string `json:"package"`
	// Requirement is the dependency as the bundle declares it.
	Requirement string `json:"requirement"`
	// PackageInstall is the PackageInstall of this namespace that installs
	// it.
	// +optional
	PackageInstall string `json:"packageInstall,omitempty"`
	// Installed says the cluster meets it.
	Installed bool `json:"installed"`
}

// OperatorInstallStatus is the one place that says what runs, what is
// asked, held, offered, where a walk stands and how healthy it is. Each
// condition's observedGeneration is the generation it describes.
type OperatorInstallStatus struct {
	// ObservedGeneration is the generation the controller last judged.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Installed is the bundle that runs: the one its BundleDeployment
	// installed last.
	// +optional
	Installed *BundleVersion `json:"installed,omitempty"`
	// Asked is the bundle the install moves to: the one the spec names, or,
	// when the catalog withdrew that one, kapp-controller's pick now.
	// +optional
	Asked *BundleVersion `json:"asked,omitempty"`
	// Walk is set while the install moves along the channel more than one
	// edge, and when such a move stopped.
	// +optional
	Walk *WalkStatus `json:"walk,omitempty"`
	// BundleDeployment names the BundleDeployment the install writes.
	// +optional
	BundleDeployment string `json:"bundleDeployment,omitempty"`
	// Dependencies are what the bundle asked for requires from the catalog.
	// +optional
	// +listType=atomic
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// Conditions: Installed, Progressing, Held, UpgradeAvailable, Healthy.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// The values of the OperatorInstall's enumerations.
const (
	FormatRegistryV1 = "registry+v1"
	FormatPlainV0    = "plain+v0"

	PolicyCatalogProvided = "CatalogProvided"
	PolicySelfCertified   = "SelfCertified"

	ApprovalAutomatic = "Automatic"
	ApprovalManual    = "Manual"
)

// The OperatorInstall's condition types.
const (
	// TypeInstalled is True when the bundle the generation asks for is
	// installed with the generation's values; False when that failed or
	// was refused; Unknown while it is under way. While a move is held it
	// keeps describing the generation last installed.
	TypeInstalled = "Installed"
	// TypeProgressing is set while a move walks the channel one edge at a
	// time (True), or when a step of it failed (False); removed when no
	// walk is under way.
	TypeProgressing = "Progressing"
	// TypeHeld is set (True) while the version asked for is held: no
	// approval covers it, or the catalog retracted it. The version
	// installed runs meanwhile, with the generation's other values. kapp's
	// wait counts it done and successful.
	TypeHeld = "Held"
	// TypeUpgradeAvailable says whether the channel offers a higher
	// version, reachable along its edges, than the one installed.
	TypeUpgradeAvailable = "UpgradeAvailable"
	// TypeHealthy is the BundleDeployment's Healthy: the installed objects.
	TypeHealthy = "Healthy"
)

// The OperatorInstall's condition reasons.
const (
	ReasonInstallationSucceeded = "InstallationSucceeded"
	ReasonInstalling            = "Installing"
	ReasonInstallFailed         = "InstallFailed"
	ReasonUpgradeFailed         = "UpgradeFailed"
	// ReasonUpgradeRefused (Installed=False): no path of the channel leads
	// from the version installed to the one asked for.
	ReasonUpgradeRefused = "UpgradeRefused"
	// ReasonDependenciesUnmet (Installed=False): what the bundle requires
	// cannot be met.
	ReasonDependenciesUnmet = "DependenciesUnmet"
	// ReasonChannelUnreadable: the channel's Packages cannot be read
	// (kapp-controller's packaging API is not served).
	ReasonChannelUnreadable = "ChannelUnreadable"
	ReasonDeleting          = "Deleting"

	ReasonUpgrading      = "Upgrading"
	ReasonUpgradeStopped = "UpgradeStopped"

	ReasonAwaitingApproval = "AwaitingApproval"
	ReasonRetracted        = "Retracted"

	ReasonUpgradeAvailable        = "UpgradeAvailable"
	ReasonUpgradeAwaitingApproval = "UpgradeAwaitingApproval"
	ReasonAtChannelHead           = "AtChannelHead"
	ReasonNoUpgradePath           = "NoUpgradePath"
	ReasonNotInChannel            = "NotInChannel"

	ReasonHealthy = "Healthy"
	// ReasonHealthPending (Healthy=Unknown): nothing installed is judged
	// yet.
	ReasonHealthPending = "HealthPending"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=opi
// +kubebuilder:printcolumn:name="Package",type=string,JSONPath=`.spec.packageName`
// +kubebuilder:printcolumn:name="Installed",type=string,JSONPath=`.status.installed.version`
// +kubebuilder:printcolumn:name="Asked",type=string,JSONPath=`.status.asked.version`
// +kubebuilder:printcolumn:name="Held",type=string,JSONPath=`.status.conditions[?(@.type=="Held")].reason`
// +kubebuilder:printcolumn:name="Upgrade",type=string,JSONPath=`.status.conditions[?(@.type=="UpgradeAvailable")].reason`
// +kubebuilder:printcolumn:name="Healthy",type=string,JSONPath=`.status.conditions[?(@.type=="Healthy")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// OperatorInstall is one install of an OLM package from a catalog published
// as Carvel packages: what a catalog Package's template renders for its
// PackageInstall. Its controller resolves every move from the channel's
// Packages, walks it one edge at a time through one BundleDeployment, holds
// a move no approval covers, gates each step on the step's health and
// reports here.
type OperatorInstall struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OperatorInstallSpec   `json:"spec"`
	Status OperatorInstallStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OperatorInstallList is a list of OperatorInstalls.
type OperatorInstallList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorInstall `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OperatorInstall{}, &OperatorInstallList{})
}
