package templates

import (
	"slices"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// View is how a BundleDeployment of rukpak's first API is installed: its
// stored (v1alpha2) form, bd, with the built-in class, given the install
// namespace rukpak v0.16 installed into, the system namespace (its Helm
// release lived there, and namespaced objects without a namespace went
// there). A registry+v1 bundle keeps none: the conversion chooses the
// namespace from the bundle, as rukpak v0.16's did (adapter/bundlefiles). A
// v1alpha2 BundleDeployment is returned as it is.
func View(bd *rukpakv1alpha2.BundleDeployment, systemNamespace string) *rukpakv1alpha2.BundleDeployment {
	if !rukpakv1alpha1.IsV1alpha1(bd) || bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassRegistry {
		return bd
	}
	view := bd.DeepCopy()
	view.Spec.InstallNamespace = systemNamespace
	return view
}

// Reported is bd's stored (v1alpha2) form as the v1alpha2 status
// computation reads what is installed: resolvedSource, which a v1alpha1
// status has no place for, is the active Bundle's (of those listed), nil
// while no Bundle is active or its source was not resolved.
func Reported(bd *rukpakv1alpha2.BundleDeployment, listed []rukpakv1alpha1.Bundle) *rukpakv1alpha2.BundleDeployment {
	out := bd.DeepCopy()
	out.Status.ResolvedSource = nil
	active := bd.Annotations[rukpakv1alpha1.AnnotationActiveBundle]
	i := slices.IndexFunc(listed, func(b rukpakv1alpha1.Bundle) bool { return b.Name == active })
	if active == "" || i < 0 {
		return out
	}
	if b := listed[i]; b.Status.Phase == rukpakv1alpha1.PhaseUnpacked && b.Status.ResolvedSource != nil {
		src := rukpakv1alpha1.SourceToV1alpha2(*b.Status.ResolvedSource)
		out.Status.ResolvedSource = &src
	}
	return out
}
