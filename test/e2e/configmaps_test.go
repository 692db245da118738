package e2e_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("plain bundles from ConfigMaps", func() {
	It("installs a bundle split over two ConfigMaps", func(ctx context.Context) {
		configMapFrom(ctx, "split-crds", filepath.Join(helloBundle(), "manifests"))
		configMapFrom(ctx, "split-settings", filepath.Join("testdata", "namespaced", "manifests"))
		configMapsBD(ctx, "cm-split", "split-crds", "split-settings")
		Eventually(getBD(ctx, "cm-split")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.ConfigMaps", HaveLen(2)),
		))
		Expect(ownedCRDs(ctx, "cm-split")()).To(ConsistOf("greetings.example.rukpak-kapp.dev"))
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "tenant-settings"}, &corev1.ConfigMap{})).To(Succeed())
	})

	It("names a missing ConfigMap, then installs once it appears without touching the BundleDeployment", func(ctx context.Context) {
		configMapsBD(ctx, "cm-missing", "non-exist")
		Eventually(getBD(ctx, "cm-missing")).Should(haveCondition("Unpacked", "False", "UnpackFailed", `"non-exist" not found`))
		before, err := getBD(ctx, "cm-missing")()
		Expect(err).NotTo(HaveOccurred())

		configMapFrom(ctx, "non-exist", filepath.Join("testdata", "namespaced", "manifests"))
		Eventually(getBD(ctx, "cm-missing")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		after, err := getBD(ctx, "cm-missing")()
		Expect(err).NotTo(HaveOccurred())
		Expect(after.Generation).To(Equal(before.Generation))
	})

	It("refuses a ConfigMap whose files are not objects", func(ctx context.Context) {
		configMapFrom(ctx, "cm-invalid", filepath.Join(bundlesDir, "plain-v0", "subdir", "manifests"))
		configMapsBD(ctx, "cm-invalid", "cm-invalid")
		Eventually(getBD(ctx, "cm-invalid")).Should(haveCondition("Installed", "False", "InstallFailed", "cannot unmarshal string"))
	})
})
