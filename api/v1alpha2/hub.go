package v1alpha2

// Hub marks v1alpha2, the storage version, as the version every other
// version of the BundleDeployment converts through (controller-runtime's
// conversion.Hub; api/v1alpha1 is the spoke).
func (*BundleDeployment) Hub() {}
