package bundledeployment

import (
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// A BundleDeployment of rukpak's first API (v1alpha1) is served behind the
// Bundles seam (package deployments): the BundleDeployment reconciler asks it for the view, in
// load for the generated Bundles, and in report for the status write.

// WithBundles has r serve BundleDeployments of rukpak's first API with b.
// Without it they are installed as v1alpha2 ones.
func (r *BundleDeploymentReconciler) WithBundles(b Bundles) *BundleDeploymentReconciler {
	r.bundles = b
	return r
}

// servesFirstAPI says bd is one of rukpak's first API, served as one: load
// asks it once per reconcile.
func (r *BundleDeploymentReconciler) servesFirstAPI(bd *rukpakv1alpha2.BundleDeployment) bool {
	return r.bundles != nil && r.bundles.Serves(bd)
}

// viewOf is bd as it is installed: an alias class replaced by its built-in
// class and, for rukpak's first API (firstAPI), what Bundles.View makes of it.
func (r *BundleDeploymentReconciler) viewOf(bd *rukpakv1alpha2.BundleDeployment, firstAPI bool) *rukpakv1alpha2.BundleDeployment {
	view := r.set.Classes.asBuiltin(bd)
	if !firstAPI {
		return view
	}
	return r.bundles.View(view)
}
