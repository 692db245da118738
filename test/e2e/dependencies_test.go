package e2e_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
)

var _ = Describe("registry+v1 dependencies", func() {
	It("waits for the API a bundle needs, naming it, and installs once another BundleDeployment provides it", func(ctx context.Context) {
		const name, provider = "deps-operatorgroup", "deps-provides"
		deps := map[string]string{"metadata/dependencies.yaml": "dependencies:\n" +
			"- type: olm.gvk\n  value: {group: operators.coreos.com, kind: OperatorGroup, version: v1}\n"}
		ref := bdtest.BundleWith("deps/operatorgroup:v1", deps, "rukpak-bundles", "registry", "valid")
		registryBD(ctx, name, ref, name)
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "False", "DependenciesUnmet",
			"the cluster does not serve OperatorGroup (operators.coreos.com/v1)"))

		plainBD(ctx, provider, images["plain-v0/provides"])
		Eventually(getBD(ctx, provider)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})
