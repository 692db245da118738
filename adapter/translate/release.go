package translate

import (
	"slices"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Helm's ownership metadata: Helm adopts an existing object into a release
// only when it carries all three with the release's name and namespace.
const (
	LabelHelmManagedBy        = "app.kubernetes.io/managed-by"
	HelmManagedBy             = "Helm"
	AnnotationHelmReleaseName = "meta.helm.sh/release-name"
	AnnotationHelmReleaseNS   = "meta.helm.sh/release-namespace"
	releaseFile               = "rukpak-kapp-release.yml"
	releaseWait               = "--wait=false"
)

// AnnotationReleased marks an App that hands its objects back to rukpak:
// ReleasedAdoptable when kapp makes them adoptable by Helm, ReleasedInPlace
// when they are only left in place.
const (
	AnnotationReleased = "core.rukpak.io/released"
	ReleasedAdoptable  = "adoptable"
	ReleasedInPlace    = "in-place"
)

// Released is the App that hands a BundleDeployment's objects back to
// rukpak (its class was changed to one this adapter does not claim), made
// from the live App so that what is installed does not change.
//
// The App is marked noopDelete: deleting it afterwards leaves every object
// in place. Before that, kapp puts Helm's ownership metadata and the
// BundleDeployment's controller owner reference back on every object,
// exactly as rukpak's Helm release had them, so rukpak adopts the objects
// on its next install. Helm's adoption only adds or overwrites what its
// rendering sets and never removes a field, so kapp's labels stay (also in
// the selectors of a label-scoped App's workloads, where they are
// harmless); a field the API server keeps immutable that rukpak renders
// differently fails the adoption, and rukpak then uninstalls the release.
// takeover.Back decides adoptable; when false, the App only gets
// noopDelete and the objects stay as they are.
func Released(live *kappctrlv1alpha1.App, bd *rukpakv1alpha2.BundleDeployment, adoptable bool) (*kappctrlv1alpha1.App, error) {
	app := applyable(live)
	app.Spec.NoopDelete = true
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	if !adoptable {
		app.Annotations[AnnotationReleased] = ReleasedInPlace
		return app, nil
	}
	// The release only changes metadata: kapp need not wait for the
	// objects' readiness (a workload that cannot become ready would hold
	// the hand-back until kapp's timeout); a deploy the adapter canceled
	// to release the App runs again.
	app.Spec.Canceled = false
	for i := range app.Spec.Deploy {
		if k := app.Spec.Deploy[i].Kapp; k != nil && !slices.Contains(k.RawOptions, releaseWait) {
			k.RawOptions = append(append([]string(nil), k.RawOptions...), releaseWait)
		}
	}
	overlay := metadataOverlay(
		map[string]string{AnnotationHelmReleaseName: bd.Name, AnnotationHelmReleaseNS: bd.Spec.InstallNamespace},
		map[string]string{LabelHelmManagedBy: HelmManagedBy},
		rukpakOwnerReferences(bd),
	)
	files := map[string]string{releaseFile: overlay}
	if StyleOf(live) != StyleAsBundled {
		// Without the owner reference rule kapp would keep the objects'
		// owner references from the cluster (none) over the overlay's.
		files[ownerReferencesFile] = ownerReferencesConfig
	}
	if err := addTemplateFiles(app, files, releaseFile); err != nil {
		return nil, err
	}
	app.Annotations[AnnotationReleased] = ReleasedAdoptable
	return app, nil
}

// Canceled is the live App with its deploy in flight stopped
// (kapp-controller kills kapp when spec.canceled is set), to apply before
// a hand-back that must not wait for that deploy. The Released App applied
// next leaves spec.canceled out, so the apply takes it off again.
func Canceled(live *kappctrlv1alpha1.App) *kappctrlv1alpha1.App {
	app := applyable(live)
	app.Spec.Canceled = true
	return app
}

// applyable is a copy of the live App that can be applied as it is.
func applyable(live *kappctrlv1alpha1.App) *kappctrlv1alpha1.App {
	app := live.DeepCopy()
	app.TypeMeta = metav1.TypeMeta{APIVersion: kappctrlv1alpha1.SchemeGroupVersion.String(), Kind: "App"}
	app.Status = kappctrlv1alpha1.AppStatus{}
	// What the API server sets cannot be applied.
	m := &app.ObjectMeta
	m.UID, m.ResourceVersion, m.Generation, m.CreationTimestamp = "", "", 0, metav1.Time{}
	m.ManagedFields, m.Finalizers, m.DeletionTimestamp, m.DeletionGracePeriodSeconds = nil, nil, nil, nil
	// The adapter applies kapp-controller's finalizer with every App: an
	// apply without it would take it off, and the App would go at its
	// delete without kapp-controller's last word.
	if slices.Contains(live.Finalizers, KappControllerFinalizer) {
		m.Finalizers = []string{KappControllerFinalizer}
	}
	return app
}

// rukpakOwnerReferences is the owner reference helm-operator-plugins puts
// on every object of a rukpak release, so Helm's adoption patch leaves it.
func rukpakOwnerReferences(bd *rukpakv1alpha2.BundleDeployment) []metav1.OwnerReference {
	return OwnerReferences(bd)
}
