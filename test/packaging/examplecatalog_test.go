package packaging_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// make run publishes harness.ExampleCatalog and prints its kctrl commands;
// here each command runs as kctrl makes its calls, in the order printed.
var _ = Describe("make run's example catalog", func() {
	It("is published, and the kctrl commands make run prints install an operator from it", func(ctx context.Context) {
		catalogsAPI(ctx)
		steps, err := env.ExampleCatalog(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(steps).NotTo(BeEmpty())
		DeferCleanup(func(ctx context.Context) {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, harness.ExampleCatalogNamespace, "headscale")).To(Succeed())
		})
		for _, step := range steps {
			By(step.Command)
			Expect(kctrl(ctx, func(ctx context.Context) error { return step.Run(ctx, env.ControlPlane.Config) })).To(Succeed(), step.Command)
		}
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "headscale." + harness.ExampleCatalogNamespace}, bd)).To(Succeed())
		Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "headscale-operator", Name: "headscale-operator-controller-manager"}, &appsv1.Deployment{})).To(Succeed())
	}, SpecTimeout(4*time.Minute))
})
