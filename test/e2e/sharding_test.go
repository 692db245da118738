package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The app namespaces of config/sharding.
var shards = []string{"rukpak-apps-0", "rukpak-apps-1"}

// configMapBundle pushes a bundle of one ConfigMap named name to reg.
func configMapBundle(reg *harness.Registry, name string) string {
	GinkgoHelper()
	dir := filepath.Join(GinkgoT().TempDir(), "manifests")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  mode: strict\n", name)), 0o644)).To(Succeed())
	ref, _, err := reg.PushDir(filepath.Dir(dir), "sharding/"+name+":v1")
	Expect(err).NotTo(HaveOccurred())
	return ref
}

var _ = Describe("Apps spread over app namespaces, each with a kapp-controller of its own", Serial, Ordered, func() {
	BeforeAll(func(ctx context.Context) {
		By("applying config/sharding's app namespaces and scoping every kapp-controller to one namespace")
		rendered, err := env.Kustomize(ctx, "config/sharding/app-namespaces")
		Expect(err).NotTo(HaveOccurred())
		_, err = harness.ApplyYAML(ctx, env.Client, rendered)
		Expect(err).NotTo(HaveOccurred())
		env.KappController.Stop()
		env.KappController.Namespace = harness.SystemNamespace
		Expect(env.KappController.Start(ctx)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			env.KappController.Stop()
			env.KappController.Namespace = ""
			Expect(env.KappController.Start(ctx)).To(Succeed())
		})
		for _, ns := range shards {
			kc, err := env.StartKappController(ctx, "kapp-controller-"+ns, ns)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(kc.Stop)
		}
		Expect(env.Adapter.Restart(ctx, "--app-namespaces", shards[0]+","+shards[1])).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(env.Adapter.Restart(ctx)).To(Succeed()) })
	})

	It("installs each BundleDeployment through its namespace's kapp-controller, with its pull Secret copied there, and repairs drift there", func(ctx context.Context) {
		cfg := translate.Config{SystemNamespace: harness.SystemNamespace, AppNamespaces: shards}
		// Names that land in different namespaces.
		public, private := "shard-a", "shard-b"
		Expect(translate.Placement(cfg, public)).NotTo(Equal(translate.Placement(cfg, private)))

		plainBD(ctx, public, configMapBundle(env.Registry, public))
		plainBD(ctx, private, configMapBundle(env.PrivateRegistry, private), func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.ImagePullSecretName = pullSecretRef
		})
		for _, name := range []string{public, private} {
			Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
			ns := translate.Placement(cfg, name)
			app := appIn(ctx, ns, name)
			Expect(app.Status.Deploy).NotTo(BeNil())
			Expect(env.Client.Get(ctx, objKey("default", name), &corev1.ConfigMap{})).To(Succeed())
		}
		copied := &corev1.Secret{}
		Expect(env.Client.Get(ctx, objKey(translate.Placement(cfg, private), pullSecretRef), copied)).To(Succeed())
		Expect(copied.Labels).To(HaveKeyWithValue(adapter.LabelMirror, "true"))

		By("deleting an installed object of an App in an app namespace")
		time.Sleep(2 * time.Second)
		Expect(env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: private}})).To(Succeed())
		took := restoredWithin(ctx, 5*time.Second, func() bool {
			return env.Client.Get(ctx, objKey("default", private), &corev1.ConfigMap{}) == nil
		})
		GinkgoWriter.Printf("restored after %s\n", took)
	})
})

// appIn reads an App from namespace ns.
func appIn(ctx context.Context, ns, name string) *kappctrlv1alpha1.App {
	GinkgoHelper()
	app := &kappctrlv1alpha1.App{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app)).To(Succeed())
	return app
}
