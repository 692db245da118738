// Package takeover_test installs with rukpak v0.24.0 and hands what it
// installed to rukpak-kapp, on the local control plane with the real
// kapp-controller. It has a suite of its own: the adapter must not run
// while rukpak installs.
package takeover_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var (
	env    *harness.Env
	rukpak *harness.Rukpak
	// cli is the rukpak-kapp binary, for migrate plan.
	cli string
	// images of the bundles, by name.
	images = map[string]string{}
)

// The alias classes the adapter claims while rukpak runs alongside it.
const (
	aliasPlain    = harness.AliasPlainClass
	aliasHelm     = "kapp-helm"
	aliasRegistry = "kapp-registry"
)

func TestTakeOver(t *testing.T) {
	bdtest.RunSuite(t, "Take-over Suite", 2*time.Minute, 250*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	env, err = harness.Start(ctx, harness.Options{ControllerManager: true, FakeNodes: true, KappController: true, Servers: true})
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("harness logs: %s\n", env.LogDir())
	// rukpak's BundleDeployments must not get the adapter's finalizer.
	Expect(env.PointFinalizerPolicyAt(ctx, aliasPlain, aliasHelm, aliasRegistry)).To(Succeed())

	for name, dir := range map[string]string{
		"plain":    filepath.Join("testdata", "plain"),
		"helm":     filepath.Join(env.Root, "examples", "charts", "hello-world"),
		"registry": filepath.Join(env.Root, "test", "testdata", "rukpak-bundles", "registry", "valid"),
	} {
		images[name], _, err = env.Registry.PushDir(dir, "takeover/"+name+":v1")
		Expect(err).NotTo(HaveOccurred())
	}

	cli, err = harness.GoBinary(ctx, env.Root, "./cmd/rukpak-kapp", filepath.Join(env.Dir, "rukpak-kapp-cli"))
	Expect(err).NotTo(HaveOccurred())

	rukpak, err = env.StartRukpak(ctx, true)
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(5*time.Minute))

var _ = AfterSuite(func() {
	if rukpak != nil {
		rukpak.Stop()
	}
	if env != nil {
		env.Stop()
	}
})

// A failed spec prints every BundleDeployment and App as they are.
var _ = JustAfterEach(func(ctx context.Context) {
	if !CurrentSpecReport().Failed() || env == nil {
		return
	}
	bds := &rukpakv1alpha2.BundleDeploymentList{}
	if err := env.Client.List(ctx, bds); err == nil {
		for _, bd := range bds.Items {
			out, _ := yaml.Marshal(map[string]any{"class": bd.Spec.ProvisionerClassName, "generation": bd.Generation, "finalizers": bd.Finalizers, "status": bd.Status})
			GinkgoWriter.Printf("--- BundleDeployment %s:\n%s\n", bd.Name, out)
		}
	}
	apps := &kappctrlv1alpha1.AppList{}
	if err := env.Client.List(ctx, apps); err == nil {
		for _, app := range apps.Items {
			msg := app.Status.UsefulErrorMessage
			if len(msg) > 2000 {
				msg = msg[len(msg)-2000:]
			}
			GinkgoWriter.Printf("--- App %s: generation %d, observed %d, conditions %+v\n%s\n", app.Name, app.Generation, app.Status.ObservedGeneration, app.Status.Conditions, msg)
		}
	}
	GinkgoWriter.Printf("process logs are under %s (set KEEP_HARNESS_DIR=1 to keep them)\n", env.LogDir())
})
