package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var (
	env *harness.Env
	// images maps a bundle name (plain-v0/valid) to its reference by tag.
	images        = map[string]string{}
	digests       = map[string]string{}
	privateValid  string
	tlsImages     = map[string]string{}
	bundlesDir    string
	pullSecretRef = "private-registry"
)

func TestE2E(t *testing.T) {
	bdtest.RunSuite(t, "End-to-end Suite", 2*time.Minute, 250*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	env, err = harness.Start(ctx, harness.Options{ControllerManager: true, FakeNodes: true, KappController: true, Adapter: true, Servers: true})
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("harness logs: %s\n", env.LogDir())
	bdtest.Use(env)

	bundlesDir = filepath.Join(env.Root, "test", "testdata", "rukpak-bundles")
	entries, err := os.ReadDir(filepath.Join(bundlesDir, "plain-v0"))
	Expect(err).NotTo(HaveOccurred())
	for _, e := range entries {
		ref, digest, err := env.Registry.PushDir(filepath.Join(bundlesDir, "plain-v0", e.Name()), "bundles/plain-v0:"+e.Name())
		Expect(err).NotTo(HaveOccurred())
		images["plain-v0/"+e.Name()] = ref
		digests["plain-v0/"+e.Name()] = digest.String()
	}
	privateValid, _, err = env.PrivateRegistry.PushDir(filepath.Join(bundlesDir, "plain-v0", "valid"), "bundles/plain-v0:valid")
	Expect(err).NotTo(HaveOccurred())
	for _, name := range []string{"valid", "provides"} {
		ref, digest, err := env.TLSRegistry.PushDir(filepath.Join(bundlesDir, "plain-v0", name), "bundles/plain-v0:"+name)
		Expect(err).NotTo(HaveOccurred())
		tlsImages[name], digests["tls/"+name] = ref, digest.String()
	}
	// A small bundle (one CRD, a ServiceAccount, a ConfigMap) for specs that
	// need an install, not rukpak's 8 OLM CRDs: it installs and deletes in
	// a fraction of the time.
	images["hello"], _, err = env.Registry.PushDir(helloBundle(), "examples/plain-hello:v1")
	Expect(err).NotTo(HaveOccurred())
	tlsImages["hello"], _, err = env.TLSRegistry.PushDir(helloBundle(), "examples/plain-hello:v1")
	Expect(err).NotTo(HaveOccurred())

	Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: pullSecretRef, Namespace: harness.SystemNamespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: env.PrivateRegistry.DockerConfigJSON()},
	})).To(Succeed())
}, NodeTimeout(5*time.Minute))

var _ = AfterSuite(func() {
	if env != nil {
		env.Stop()
	}
})

// A failed spec prints every BundleDeployment and App as they are, which
// usually shows the cause without the process logs.
var _ = JustAfterEach(func(ctx context.Context) {
	if !CurrentSpecReport().Failed() || env == nil {
		return
	}
	bds := &rukpakv1alpha2.BundleDeploymentList{}
	apps := &kappctrlv1alpha1.AppList{}
	if err := env.Client.List(ctx, bds); err == nil {
		for _, bd := range bds.Items {
			out, _ := yaml.Marshal(bd.Status)
			GinkgoWriter.Printf("--- BundleDeployment %s status:\n%s\n", bd.Name, out)
		}
	}
	if err := env.Client.List(ctx, apps); err == nil {
		for _, app := range apps.Items {
			deployOut := ""
			if d := app.Status.Deploy; d != nil {
				deployOut = d.Stdout + d.Stderr
				if len(deployOut) > 2000 {
					deployOut = deployOut[len(deployOut)-2000:]
				}
			}
			app.Status.Deploy, app.Status.Inspect = nil, nil
			out, _ := yaml.Marshal(app.Status)
			GinkgoWriter.Printf("--- App %s status:\n%s\n--- its kapp output (tail):\n%s\n", app.Name, out, deployOut)
		}
	}
	GinkgoWriter.Printf("process logs are under %s (set KEEP_HARNESS_DIR=1 to keep them)\n", env.LogDir())
})

// helloBundle is examples/bundles/plain-hello.
func helloBundle() string { return filepath.Join(env.Root, "examples", "bundles", "plain-hello") }
