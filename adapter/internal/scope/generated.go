package scope

import rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"

// Generated is what one reconcile of a BundleDeployment of rukpak's first
// API (v1alpha1) found of the Bundles its template generates.
type Generated struct {
	// BD is the BundleDeployment at v1alpha1, converted from the one read.
	BD *rukpakv1alpha1.BundleDeployment
	// Listed are its Bundles (the owner labels), as read.
	Listed []rukpakv1alpha1.Bundle
	// Bundle is the current template's Bundle, as read or as just made;
	// nil when there is none, and Failure says why.
	Bundle  *rukpakv1alpha1.Bundle
	Failure string
	// Missing is the template's Bundle, to be made: the read found none
	// and the BundleDeployment may have one more.
	Missing *rukpakv1alpha1.Bundle
}
