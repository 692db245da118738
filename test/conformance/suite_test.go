// Package conformance_test runs rukpak v0.24.0's own end-to-end suite,
// unchanged, against rukpak-kapp on the local control plane, and checks
// each spec's outcome against what is expected of it
// (expectations_test.go): passes, is skipped because it needs a running
// Pod (and a spec here checks what a user sees instead), or fails as a
// deliberate difference that docs/differences.md lists. It writes the outcome to
// $CONFORMANCE_REPORT when set (make conformance: docs/conformance.md).
package conformance_test

import (
	"context"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var (
	env         *harness.Env
	upstreamRan *upstreamRun
	// stopUpstream ends rukpak's suite if this one ends first.
	stopUpstream context.CancelFunc = func() {}
)

func TestConformance(t *testing.T) {
	bdtest.RunSuite(t, "Conformance Suite", 2*time.Minute, 250*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	env, err = harness.Start(ctx, harness.Options{ControllerManager: true, FakeNodes: true, KappController: true, Adapter: true, Servers: true, RukpakE2E: true})
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("harness logs: %s\n", env.LogDir())
	bdtest.Use(env)
	// Not the spec's context: the run outlives BeforeSuite.
	var runCtx context.Context
	runCtx, stopUpstream = context.WithCancel(context.WithoutCancel(ctx))
	upstreamRan, err = startUpstream(runCtx)
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(5*time.Minute))

var _ = AfterSuite(func() {
	stopUpstream()
	if env != nil {
		env.Stop()
	}
})

// A failed spec of this suite prints every BundleDeployment and App.
var _ = JustAfterEach(func(ctx context.Context) {
	if !CurrentSpecReport().Failed() || env == nil {
		return
	}
	bds := &rukpakv1alpha2.BundleDeploymentList{}
	if err := env.Client.List(ctx, bds); err == nil {
		for _, bd := range bds.Items {
			out, _ := yaml.Marshal(bd.Status)
			GinkgoWriter.Printf("--- BundleDeployment %s status:\n%s\n", bd.Name, out)
		}
	}
	apps := &kappctrlv1alpha1.AppList{}
	if err := env.Client.List(ctx, apps); err == nil {
		for _, app := range apps.Items {
			app.Status.Deploy, app.Status.Inspect = nil, nil
			out, _ := yaml.Marshal(app.Status)
			GinkgoWriter.Printf("--- App %s status:\n%s\n", app.Name, out)
		}
	}
	GinkgoWriter.Printf("process logs are under %s (set KEEP_HARNESS_DIR=1 to keep them)\n", env.LogDir())
})
