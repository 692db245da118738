package translate

import (
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
// in place. For an App made as bundled, kapp first puts Helm's ownership
// metadata and the BundleDeployment's controller owner reference back on
// every object, exactly as rukpak's Helm release had them, so rukpak adopts
// the objects on its next install (Helm patches them to its rendering).
//
// A label-scoped App's workloads have selectors rukpak would have to
// change, which the API server refuses; Helm would then record a failed
// install and helm-operator-plugins would uninstall it, deleting every
// object. So such objects are never made adoptable: they stay as they are,
// rukpak reports that it cannot import them, and adoptable is false.
func Released(live *kappctrlv1alpha1.App, bd *rukpakv1alpha2.BundleDeployment) (app *kappctrlv1alpha1.App, adoptable bool, err error) {
	app = &kappctrlv1alpha1.App{
		TypeMeta: metav1.TypeMeta{APIVersion: kappctrlv1alpha1.SchemeGroupVersion.String(), Kind: "App"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            live.Name,
			Namespace:       live.Namespace,
			Labels:          copyMap(live.Labels),
			Annotations:     copyMap(live.Annotations),
			OwnerReferences: live.DeepCopy().OwnerReferences,
		},
		Spec: *live.Spec.DeepCopy(),
	}
	app.Spec.NoopDelete = true
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	if StyleOf(live) != StyleAsBundled {
		app.Annotations[AnnotationReleased] = ReleasedInPlace
		return app, false, nil
	}
	overlay := metadataOverlay(
		map[string]string{AnnotationHelmReleaseName: bd.Name, AnnotationHelmReleaseNS: bd.Spec.InstallNamespace},
		map[string]string{LabelHelmManagedBy: HelmManagedBy},
		rukpakOwnerReferences(bd),
	)
	if err := addTemplateFiles(app, map[string]string{releaseFile: overlay}, releaseFile); err != nil {
		return nil, false, err
	}
	app.Annotations[AnnotationReleased] = ReleasedAdoptable
	return app, true, nil
}

// rukpakOwnerReferences is the owner reference helm-operator-plugins puts
// on every object of a rukpak release, so Helm's adoption patch leaves it.
func rukpakOwnerReferences(bd *rukpakv1alpha2.BundleDeployment) []metav1.OwnerReference {
	return OwnerReferences(bd)
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
