// The OLM v1 suite runs OLM v1 as it last ran on rukpak: operator-controller
// v0.9.0 and catalogd v0.10.0, built from their modules by test/tools, out
// of cluster with their own ServiceAccounts, RBAC and CRDs, on the local
// control plane with rukpak-kapp and kapp-controller in place of rukpak.
// Its own specs install, upgrade and delete an operator through a
// ClusterExtension; then operator-controller's own end-to-end suite runs,
// unchanged, and its outcome is written to docs/conformance-olm.md (under
// make conformance-olm: $OLM_CONFORMANCE_REPORT).
//
// With OLM_BASELINE=rukpak-v0.16.0 the same suite runs against rukpak
// v0.16.0 itself, the rukpak operator-controller v0.9.0 was released
// against, to record which of its specs this control plane can run at all.
package olm_test

import (
	"context"
	"os"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var (
	env *harness.Env
	// baseline is set when the suite runs against rukpak v0.16.0.
	baseline = os.Getenv("OLM_BASELINE") == baselineRukpak
	rukpak   *harness.RukpakV016
)

// baselineRukpak names the baseline run.
const baselineRukpak = "rukpak-v0.16.0"

func TestOLM(t *testing.T) {
	if v := os.Getenv("OLM_BASELINE"); v != "" && v != baselineRukpak {
		t.Fatalf("OLM_BASELINE=%q: the one baseline is %s", v, baselineRukpak)
	}
	bdtest.RunSuite(t, "OLM v1 Suite", 2*time.Minute, 250*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	opts := harness.Options{ControllerManager: true, FakeNodes: true, Servers: true, OLM: true, KappController: !baseline, Adapter: !baseline}
	env, err = harness.Start(ctx, opts)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("harness logs: %s\n", env.LogDir())
	bdtest.Use(env)
	if baseline {
		Expect(env.InstallRukpakV016API(ctx)).To(Succeed())
		rukpak, err = env.StartRukpakV016(ctx)
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(env.StartOLMControllers(ctx)).To(Succeed())
}, NodeTimeout(5*time.Minute))

// A failed spec prints every BundleDeployment and Bundle, and each App's
// status, as they are.
var _ = JustAfterEach(func(ctx context.Context) {
	if !CurrentSpecReport().Failed() || env == nil {
		return
	}
	for _, list := range []client.ObjectList{&rukpakv1alpha1.BundleDeploymentList{}, &rukpakv1alpha1.BundleList{}, &kappctrlv1alpha1.AppList{}} {
		if err := env.Client.List(ctx, list); err != nil {
			continue
		}
		out, _ := yaml.Marshal(list)
		GinkgoWriter.Printf("--- %T:\n%s\n", list, out)
	}
})

var _ = AfterSuite(func() {
	if rukpak != nil {
		rukpak.Stop()
	}
	if env != nil {
		env.Stop()
	}
})
