package e2e_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// configMapFrom makes an immutable ConfigMap in the system namespace holding
// every regular file found under dirs, flattened, as rukpak's tests did.
func configMapFrom(ctx context.Context, name string, dirs ...string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.SystemNamespace}, Data: map[string]string{}}
	for _, dir := range dirs {
		Expect(filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			cm.Data[d.Name()] = string(data)
			return err
		})).To(Succeed())
	}
	immutable := true
	cm.Immutable = &immutable
	Expect(env.Client.Create(ctx, cm)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, cm) })
}

func configMapsBD(ctx context.Context, name string, cms ...string) {
	var src []rukpakv1alpha2.ConfigMapSource
	for _, cm := range cms {
		src = append(src, rukpakv1alpha2.ConfigMapSource{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: cm}, Path: "manifests"})
	}
	plainBD(ctx, name, "", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeConfigMaps, ConfigMaps: src}
	})
}

var _ = Describe("plain bundles from ConfigMaps", func() {
	It("installs a bundle split over two ConfigMaps", func(ctx context.Context) {
		configMapFrom(ctx, "split-crds", filepath.Join(bundlesDir, "plain-v0", "valid", "manifests"))
		configMapFrom(ctx, "split-settings", filepath.Join("testdata", "namespaced", "manifests"))
		configMapsBD(ctx, "cm-split", "split-crds", "split-settings")
		Eventually(getBD(ctx, "cm-split")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.ConfigMaps", HaveLen(2)),
		))
		Expect(ownedCRDs(ctx, "cm-split")()).To(HaveLen(8))
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
