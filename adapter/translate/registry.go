package translate

import (
	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
)

// registryDeploy lets kapp apply a bundle that converts to no objects (a
// CSV without deployments): for OLM that is an installed operator.
func registryDeploy() []kappctrlv1alpha1.AppDeploy {
	return []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{
		RawOptions: []string{"--dangerous-allow-empty-list-of-resources=true"},
	}}}
}
