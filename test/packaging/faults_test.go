package packaging_test

import (
	"context"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The adapter killed and kapp-controller stopped in the middle of what a
// catalog install does over several steps: everything converges with its
// status true, nothing recreated, nothing twice, nothing left behind.
var _ = Describe("faults in the middle of a catalog install", func() {
	It("converges when the adapter is killed and kapp-controller stopped in the middle of a channel walk: the head installed, nothing recreated", func(ctx context.Context) {
		const ns, install, installNS = "catalog-walk-faults", "efs", "catalog-efs-faults"
		bdName := install + "." + ns
		createNamespace(ctx, ns)
		installEfs(ctx, ns, install, installNS, pushWalkCatalog(ctx, "walk-faults", ""))
		before := efsUIDs(ctx, bdName, installNS)

		By("kctrl package installed update -i efs --version 2.0.0, without waiting: a walk of three steps")
		Expect(harness.KctrlInstalledUpdateNoWait(ctx, env.ControlPlane.Config, ns, install, "2.0.0")).To(Succeed())
		step := func(n string) func() ([]string, error) {
			return func() ([]string, error) {
				steps, err := upgradeSteps(ctx, ns, install)
				return slices.DeleteFunc(steps, func(s string) bool { return !strings.Contains(s, "step "+n+" of 3") }), err
			}
		}

		By("the adapter killed at the walk's first step, and started again")
		Eventually(step("1")).WithContext(ctx).WithPolling(20 * time.Millisecond).ShouldNot(BeEmpty())
		env.Adapter.Kill()
		Expect(env.Adapter.Start(ctx)).To(Succeed())

		By("kapp-controller stopped at its second step, and started again")
		Eventually(step("2")).WithContext(ctx).WithPolling(20 * time.Millisecond).ShouldNot(BeEmpty())
		stopKappControllerAWhile(ctx)

		By("2.0.0 installed, reported at the generation that asked for it, and what 1.0.0 installed kept")
		Eventually(func(g Gomega) {
			bd := &rukpakv1alpha2.BundleDeployment{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			g.Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.0.0"))
			g.Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
			g.Expect(installIsInstalled(ctx, ns, install)).To(BeTrue())
			g.Expect(reconciled(ctx, ns, install)).To(BeTrue())
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		pi := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install}, pi)).To(Succeed())
		Expect(pi.Status.Version).To(Equal("2.0.0"))
		Expect(efsUIDs(ctx, bdName, installNS)).To(Equal(before), "nothing recreated")
		expectOneEach(ctx, ns, install)

		By("the adapter started again while kapp-controller is stopped: the channel cannot be read, and the notice it wrote stands")
		const atHead = "False AtChannelHead 2.0.0, the version installed, is the head of channel stable"
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(Equal(atHead))
		env.StopKappController()
		DeferCleanup(func(ctx context.Context) {
			if env.KappController == nil {
				Expect(env.StartKappControllerAgain(ctx)).To(Succeed())
			}
		})
		env.Adapter.Kill()
		Expect(env.Adapter.Start(ctx)).To(Succeed())
		// The gauge is set from the status the new adapter computed: once
		// it shows, the install was looked at without its channel.
		gauge := `operatorinstall="` + install + `"`
		Eventually(adapterMetric).WithContext(ctx).WithArguments("rukpak_kapp_catalog_upgrade_available", gauge).Should(Equal(0.0))
		Expect(adapterMetric(ctx, "rukpak_kapp_api_served", `api="the catalog APIs"`)).To(Equal(0.0), "the channel was not readable")
		Expect(upgradeNotice(ctx, ns, install)).To(Equal(atHead))
		Expect(installIsInstalled(ctx, ns, install)).To(BeTrue(), "what runs stays said")
		By("kapp-controller back: the channel read again, the notice the same")
		Expect(env.StartKappControllerAgain(ctx)).To(Succeed())
		Eventually(adapterMetric).WithContext(ctx).WithArguments("rukpak_kapp_api_served", `api="the catalog APIs"`).Should(Equal(1.0))
		Expect(upgradeNotice(ctx, ns, install)).To(Equal(atHead))
	}, SpecTimeout(8*time.Minute))

	It("converges when the adapter is killed and kapp-controller stopped in the middle of a dependency install: each dependency installed once", func(ctx context.Context) {
		const ns = "catalog-deps-faults"
		ruptura := "stable.ruptura-operator." + catalog.DefaultDomain
		createNamespace(ctx, ns)
		allowDependencies(ctx, ns)
		pinned := pushDepsCatalog(ctx)
		By("kctrl package repository add -r deps --url " + pinned)
		Expect(harness.KctrlRepositoryAdd(ctx, env.ControlPlane.Config, ns, "deps", pinned)).To(Succeed())
		installs := []string{"ruptura", "aws-efs-operator", "headscale-operator"}
		uninstallAtEnd(ns, installs, efsCRD, rupturaCRD, headscaleCRD)

		By("kctrl package install -i ruptura -p " + ruptura + ", its wait alongside the faults: ruptura requires aws-efs-operator, which requires headscale-operator")
		done := make(chan error, 1)
		go func() {
			done <- kctrl(ctx, func(ctx context.Context) error {
				return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: "ruptura", Package: ruptura, Version: "0.9.1",
					Values: []byte("installNamespace: catalog-ruptura-faults\n")})
			})
		}()
		exists := func(key client.ObjectKey, o client.Object) func() error {
			return func() error { return env.Client.Get(ctx, key, o) }
		}

		By("the adapter killed once it made the first dependency's PackageInstall, and started again")
		Eventually(exists(client.ObjectKey{Namespace: ns, Name: "aws-efs-operator"}, &packagingv1alpha1.PackageInstall{})).WithContext(ctx).
			WithPolling(20 * time.Millisecond).Should(Succeed())
		env.Adapter.Kill()
		Expect(env.Adapter.Start(ctx)).To(Succeed())

		By("kapp-controller stopped once the second dependency's BundleDeployment exists, and started again")
		Eventually(exists(client.ObjectKey{Name: "headscale-operator." + ns}, &rukpakv1alpha2.BundleDeployment{})).WithContext(ctx).
			WithPolling(20 * time.Millisecond).Should(Succeed())
		stopKappControllerAWhile(ctx)

		By("every install reconciled, its BundleDeployment installed at its generation, each once")
		Eventually(func(g Gomega) {
			for _, name := range installs {
				bd := &rukpakv1alpha2.BundleDeployment{}
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name + "." + ns}, bd)).To(Succeed())
				g.Expect(installedAt(bd)).To(BeTrue(), "%s: %+v", name, bd.Status.Conditions)
				g.Expect(installIsInstalled(ctx, ns, name)).To(BeTrue(), name)
				g.Expect(reconciled(ctx, ns, name)).To(BeTrue(), name)
			}
		}).WithContext(ctx).WithTimeout(4 * time.Minute).Should(Succeed())
		Eventually(done).WithContext(ctx).Should(Receive())
		expectOneEach(ctx, ns, installs...)
		dependency := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "headscale-operator"}, dependency)).To(Succeed())
		Expect(dependency.Labels).To(HaveKeyWithValue(catalog.LabelRequiredBy, "aws-efs-operator"))
	}, SpecTimeout(10*time.Minute))
})

// stopKappControllerAWhile stops kapp-controller (its aggregated packaging
// API answers 503 meanwhile) and starts it again.
func stopKappControllerAWhile(ctx context.Context) {
	env.StopKappController()
	DeferCleanup(func(ctx context.Context) {
		if env.KappController == nil {
			Expect(env.StartKappControllerAgain(ctx)).To(Succeed())
		}
	})
	Expect(env.StartKappControllerAgain(ctx)).To(Succeed())
}

// reconciled says kapp-controller reconciled the PackageInstall ns/name's
// generation, and its App, successfully.
func reconciled(ctx context.Context, ns, name string) bool {
	pi := &packagingv1alpha1.PackageInstall{}
	app := &kappctrlv1alpha1.App{}
	if env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi) != nil || env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app) != nil {
		return false
	}
	ok := func(s kappctrlv1alpha1.GenericStatus, generation int64) bool {
		return s.ObservedGeneration == generation && slices.ContainsFunc(s.Conditions, func(c kappctrlv1alpha1.Condition) bool {
			return c.Type == kappctrlv1alpha1.ReconcileSucceeded && c.Status == "True"
		})
	}
	return ok(pi.Status.GenericStatus, pi.Generation) && ok(app.Status.GenericStatus, app.Generation)
}

// expectOneEach says the catalog namespace ns holds exactly the
// PackageInstalls names, and one OperatorInstall, one BundleDeployment and
// one App of the adapter's for each.
func expectOneEach(ctx context.Context, ns string, names ...string) {
	var pis packagingv1alpha1.PackageInstallList
	ExpectWithOffset(1, env.Client.List(ctx, &pis, client.InNamespace(ns))).To(Succeed())
	var got []string
	for _, p := range pis.Items {
		got = append(got, p.Name)
	}
	ExpectWithOffset(1, got).To(ConsistOf(names), "no PackageInstall twice, none left over")
	var ois catalogsv1alpha1.OperatorInstallList
	ExpectWithOffset(1, env.Client.List(ctx, &ois, client.InNamespace(ns))).To(Succeed())
	got = nil
	for _, o := range ois.Items {
		got = append(got, o.Name)
	}
	ExpectWithOffset(1, got).To(ConsistOf(names), "one OperatorInstall each")
	var bds rukpakv1alpha2.BundleDeploymentList
	ExpectWithOffset(1, env.Client.List(ctx, &bds)).To(Succeed())
	var apps kappctrlv1alpha1.AppList
	ExpectWithOffset(1, env.Client.List(ctx, &apps)).To(Succeed())
	for _, name := range names {
		bd := name + "." + ns
		ExpectWithOffset(1, slices.ContainsFunc(bds.Items, func(b rukpakv1alpha2.BundleDeployment) bool { return b.Name == bd })).To(BeTrue(), bd)
		owned := 0
		for _, a := range apps.Items {
			for _, o := range a.OwnerReferences {
				if o.Kind == "BundleDeployment" && o.Name == bd {
					owned++
				}
			}
		}
		ExpectWithOffset(1, owned).To(Equal(1), "Apps of BundleDeployment %s", bd)
	}
}

// efsUIDs are the UIDs of the walk's BundleDeployment, the operator's
// Deployment and CRD, and its install namespace.
func efsUIDs(ctx context.Context, bdName, installNS string) map[string]types.UID {
	return uidsOf(ctx, map[string]client.ObjectKey{
		"bd": {Name: bdName}, "deployment": {Namespace: installNS, Name: "aws-efs-operator"},
		"crd": {Name: efsCRD}, "namespace": {Name: installNS},
	})
}
