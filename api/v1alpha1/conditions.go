package v1alpha1

import "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"

// Provisioner classes, the same in both generations.
const (
	ClassPlain    = v1alpha2.ClassPlain
	ClassRegistry = v1alpha2.ClassRegistry
	ClassHelm     = v1alpha2.ClassHelm
)

// Labels rukpak put on generated Bundles (and on what it installed).
const (
	LabelOwnerKind = v1alpha2.LabelOwnerKind
	LabelOwnerName = v1alpha2.LabelOwnerName
	// OwnerKindBundleDeployment is the owner-kind of a generated Bundle and
	// of every object a BundleDeployment installed.
	OwnerKindBundleDeployment = v1alpha2.OwnerKind
	// OwnerKindBundle is the owner-kind of what a Bundle owns (rukpak's
	// unpack Pods).
	OwnerKindBundle = "Bundle"
	// LabelBundleTemplateHash on a generated Bundle is the hash of the
	// template it was made from: a BundleDeployment's Bundle for its
	// current template is the one whose label matches.
	LabelBundleTemplateHash = "core.rukpak.io/bundle-template-hash"
)

// Name limits rukpak's CRDs enforced (config/crd/patches). A generated
// Bundle is named <bd>-<template hash>, cut to MaxBundleNameLength.
const (
	MaxBundleNameLength           = 52
	MaxBundleDeploymentNameLength = 45
	// MaxGeneratedBundles is how many Bundles one BundleDeployment may have
	// before rukpak stopped making new ones.
	MaxGeneratedBundles = 4
)

// Bundle phases (status.phase).
const (
	// PhasePending: the content is not fetched yet.
	PhasePending = "Pending"
	// PhaseUnpacking: the fetch runs.
	PhaseUnpacking = "Unpacking"
	// PhaseUnpacked: the content was fetched and is valid.
	PhaseUnpacked = "Unpacked"
	// PhaseFailing: the fetch or the content failed.
	PhaseFailing = "Failing"
)

// Condition types.
const (
	// TypeUnpacked (Bundles) is True once the content was fetched.
	TypeUnpacked = v1alpha2.TypeUnpacked
	// TypeHasValidBundle (BundleDeployments) says whether the Bundle of the
	// current template is unpacked and loadable.
	TypeHasValidBundle = v1alpha2.TypeHasValidBundle
	// TypeInstalled is True once the active Bundle was installed.
	TypeInstalled = v1alpha2.TypeInstalled
	// TypeHealthy is True while the installed objects are ready.
	TypeHealthy = v1alpha2.TypeHealthy
)

// Condition reasons: rukpak v0.16.0's names (those v1alpha2 kept are the
// same constants).
const (
	// ReasonUnpackPending: Unpacked False on a Bundle whose content is not
	// fetched yet; HasValidBundle True (sic) on its BundleDeployment.
	ReasonUnpackPending = v1alpha2.ReasonUnpackPending
	// ReasonUnpacking: Unpacked False while the fetch runs.
	ReasonUnpacking = v1alpha2.ReasonUnpacking
	// ReasonUnpackSuccessful: Unpacked True, and HasValidBundle True.
	ReasonUnpackSuccessful = v1alpha2.ReasonUnpackSuccessful
	// ReasonUnpackFailed: Unpacked False, and HasValidBundle False, when the
	// fetch or the content failed.
	ReasonUnpackFailed = v1alpha2.ReasonUnpackFailed
	// ReasonProcessingFinalizerFailed: Unpacked Unknown when a Bundle's
	// finalizer could not be handled.
	ReasonProcessingFinalizerFailed = "ProcessingFinalizerFailed"
	// ReasonBundleLoadFailed: HasValidBundle False when the unpacked
	// content could not be loaded or handled.
	ReasonBundleLoadFailed = "BundleLoadFailed"
	// ReasonReconcileFailed: HasValidBundle Unknown when the Bundle could
	// not be found or made; Installed False when re-applying failed.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonInstallationSucceeded: Installed True.
	ReasonInstallationSucceeded = v1alpha2.ReasonInstallationSucceeded
	// ReasonInstallFailed: Installed False after a failed first install.
	ReasonInstallFailed = v1alpha2.ReasonInstallFailed
	// ReasonUpgradeFailed: Installed False after a failed upgrade.
	ReasonUpgradeFailed = v1alpha2.ReasonUpgradeFailed
	// ReasonErrorGettingClient: Installed False when no install client could be made.
	ReasonErrorGettingClient = "ErrorGettingClient"
	// ReasonErrorGettingReleaseState: Installed False when what is installed could not be read.
	ReasonErrorGettingReleaseState = "ErrorGettingReleaseState"
	// ReasonCreateDynamicWatchFailed: Installed False when the installed objects could not be watched.
	ReasonCreateDynamicWatchFailed = "CreateDynamicWatchFailed"
	// ReasonHealthy: Healthy True.
	ReasonHealthy = v1alpha2.ReasonHealthy
	// ReasonUnhealthy: Healthy False with the objects that are not ready.
	ReasonUnhealthy = v1alpha2.ReasonUnhealthy
	// ReasonInstallationStatusFalse: Healthy False while Installed is False.
	ReasonInstallationStatusFalse = v1alpha2.ReasonInstallationStatusFalse
	// ReasonInstallationStatusUnknown: Healthy Unknown while Installed is not known.
	ReasonInstallationStatusUnknown = v1alpha2.ReasonInstallationStatusUnknown
	// ReasonObjectLookupFailure and ReasonReadingContentFailed were defined
	// by rukpak and never set.
	ReasonObjectLookupFailure  = "ObjectLookupFailure"
	ReasonReadingContentFailed = "ReadingContentFailed"
)
