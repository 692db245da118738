package packaging_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// upgradeApproval: Manual, as OLM v0's installPlanApproval: Manual, on the
// walk catalog of aws-efs-operator (1.0.0 ← 1.1.0 ← 1.2.0 ← 2.0.0, then
// 2.1.0), through the calls kctrl makes: an install that follows its
// channel holds when the channel moves, with its PackageInstall reconciled
// (a hold is no failure) and the version installed running with the new
// generation's values; the approval is the OperatorInstall's spec and
// nothing else (an annotation on the BundleDeployment counts for nothing,
// and Held, the notice and kapp's wait agree); the approval through the
// PackageInstall's values installs exactly that version; the next is held
// again, and approved by a patch of the OperatorInstall; and an install
// created at a version not approved installs nothing.
var _ = Describe("manual approval of a channel-following install", func() {
	It("holds a new version until its OperatorInstall's spec approves it, as a reconciled PackageInstall, installs exactly that one, holds the next, and installs nothing created unapproved", func(ctx context.Context) {
		const ns, install, installNS = "catalog-approval", "efs", "catalog-approval-op"
		bdName := install + "." + ns
		createNamespace(ctx, ns)
		installEfs(ctx, ns, install, installNS, pushWalkCatalog(ctx, "approval", ""))
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		before := efsUIDs(ctx, bdName, installNS)

		By("kctrl package installed update -i efs --values-file (upgradeApproval: Manual), then --version '>= 0.0.0': 2.0.0 is held, and kctrl says the reconcile succeeded")
		manual := "installNamespace: " + installNS + "\nupgradeApproval: Manual\n"
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install, []byte(manual))
		})).To(Succeed())
		installedGen := operatorInstall(ctx, ns, install).Generation
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, ">= 0.0.0")
		})).To(Succeed(), "a hold is no failed reconcile")
		// kctrl's wait judges by the App; kapp-controller copies the App's
		// status into the PackageInstall's, which kctrl's list shows, in the
		// PackageInstall's next reconcile.
		Eventually(reconciled).WithContext(ctx).WithArguments(ns, install).Should(BeTrue(), "kctrl package installed list says Reconcile succeeded")
		oi := operatorInstall(ctx, ns, install)
		Expect(oi.Spec.Version).To(Equal("2.0.0"), "kapp applied what the PackageInstall asks for")
		Expect(oi.Status.Installed).To(HaveField("Version", "1.0.0"))
		Expect(oi.Status.Asked).To(HaveField("Version", "2.0.0"))
		held := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeHeld)
		Expect(held).NotTo(BeNil(), "%+v", oi.Status.Conditions)
		Expect(held.ObservedGeneration).To(Equal(oi.Generation))
		Expect(held.Reason).To(Equal(catalogsv1alpha1.ReasonAwaitingApproval))
		Expect(held.Message).To(And(
			ContainSubstring("upgrade of aws-efs-operator held: 2.0.0 waits for approval (upgradeApproval: Manual), and 1.0.0 stays installed"),
			ContainSubstring("rukpak-kapp upgrade plan efs -n "+ns+" --to 2.0.0"),
			ContainSubstring(`approvedVersion: "2.0.0"`),
			ContainSubstring("1.0.0 runs, with this generation's other values")))
		installed := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled)
		Expect(installed.Status).To(Equal(metav1.ConditionTrue))
		Expect(installed.ObservedGeneration).To(Equal(installedGen), "a held generation is never said installed")
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v1.0.0"), "the BundleDeployment installs 1.0.0 with the held generation's values")
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationOperatorInstallGeneration, fmt.Sprint(oi.Generation)))
		pi := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install}, pi)).To(Succeed())
		Expect(pi.Status.Version).To(Equal("2.0.0"), "kctrl's version column is the version kapp-controller picked, which it records before the deploy (docs/catalogs.md says so)")
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(And(
			HavePrefix("True UpgradeAwaitingApproval Channel stable offers 2.0.0 beyond 1.0.0"),
			ContainSubstring("it waits for approval (upgradeApproval: Manual)")))
		Expect(efsUIDs(ctx, bdName, installNS)).To(Equal(before), "a hold recreates nothing")

		By("an approval written where the catalog's templates once wrote it, on the BundleDeployment, is no approval: Held, the notice and kapp's wait agree")
		byHand := client.MergeFrom(bd.DeepCopy())
		bd.Annotations[catalog.AnnotationApprovedVersion] = "2.0.0"
		Expect(env.Client.Patch(ctx, bd, byHand, client.FieldOwner("kubectl-annotate"))).To(Succeed())
		Expect(reconciled(ctx, ns, install)).To(BeTrue(), "kapp's wait still takes the hold for done")
		Consistently(func(g Gomega) {
			oi := operatorInstall(ctx, ns, install)
			g.Expect(meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeHeld)).To(HaveField("Reason", catalogsv1alpha1.ReasonAwaitingApproval))
			g.Expect(meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeUpgradeAvailable)).To(HaveField("Reason", catalogsv1alpha1.ReasonUpgradeAwaitingApproval))
			g.Expect(oi.Status.Installed).To(HaveField("Version", "1.0.0"))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())

		By("kctrl package installed update -i efs --values-file (approvedVersion: 2.0.0): kctrl returns once the walk installed 1.1.0, 1.2.0, 2.0.0")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install, []byte(manual+"approvedVersion: \"2.0.0\"\n"))
		})).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.0.0"))
		Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
		Expect(installIsInstalled(ctx, ns, install)).To(BeTrue(), "kapp's wait did not take the hold said before the approval for its outcome")
		Expect(installCondition(ctx, ns, install, catalogsv1alpha1.TypeInstalled).Message).To(
			ContainSubstring("upgraded along channel stable one edge at a time: 1.0.0 → 1.1.0 → 1.2.0 → 2.0.0"))
		Expect(installCondition(ctx, ns, install, catalogsv1alpha1.TypeHeld)).To(BeNil())
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(Equal("False AtChannelHead 2.0.0, the version installed, is the head of channel stable"))
		approvedGen := operatorInstall(ctx, ns, install).Generation

		By("a new catalog version with 2.1.0; kctrl package repository update: kapp-controller asks for 2.1.0, which the approval of 2.0.0 does not cover: held, reconciled")
		Expect(harness.KctrlRepositoryUpdate(ctx, env.ControlPlane.Config, ns, "efs", pushWalkCatalog(ctx, "approval", "", "2.1.0"))).To(Succeed())
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).WithTimeout(15 * time.Second).Should(And(
			HavePrefix("True UpgradeAwaitingApproval Channel stable offers 2.1.0 beyond 2.0.0"),
			ContainSubstring(`approvedVersion: "2.1.0"`)))
		Eventually(func(g Gomega) {
			oi := operatorInstall(ctx, ns, install)
			h := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeHeld)
			g.Expect(h).NotTo(BeNil())
			g.Expect(h.ObservedGeneration).To(Equal(oi.Generation))
			g.Expect(h.Message).To(ContainSubstring("2.1.0 waits for approval (upgradeApproval: Manual), and 2.0.0 stays installed (the version approved is 2.0.0)"))
			g.Expect(reconciled(ctx, ns, install)).To(BeTrue())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		oi = operatorInstall(ctx, ns, install)
		Expect(oi.Generation).To(BeNumerically(">", approvedGen))
		Expect(meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled).ObservedGeneration).To(Equal(approvedGen))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.0.0"))

		By("kubectl patch operatorinstall efs --type merge -p '{\"spec\":{\"approvedVersion\":\"2.1.0\"}}': whoever may update the OperatorInstall approves, as an InstallPlan's approval")
		patched := operatorInstall(ctx, ns, install)
		approve := client.MergeFrom(patched.DeepCopy())
		patched.Spec.ApprovedVersion = "2.1.0"
		Expect(env.Client.Patch(ctx, patched, approve, client.FieldOwner("kubectl-patch"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			g.Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.1.0"))
			g.Expect(installedVersion(ctx, ns, install)).To(Equal("2.1.0"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

		By("kctrl package install -i efs-held --version 2.0.0 --values-file (upgradeApproval: Manual): created at a version not approved, it installs nothing, and its reconcile succeeds")
		const heldInstall = "efs-held"
		DeferCleanup(func(ctx context.Context) {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, heldInstall)).To(Succeed())
		})
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: heldInstall, Package: "stable.aws-efs-operator." + catalog.DefaultDomain,
				Version: "2.0.0", Values: []byte("installNamespace: catalog-approval-held\nupgradeApproval: Manual\nbundleDeploymentName: efs-held\n")})
		})).To(Succeed())
		h := installCondition(ctx, ns, heldInstall, catalogsv1alpha1.TypeHeld)
		Expect(h).NotTo(BeNil())
		Expect(h.Message).To(ContainSubstring("install of aws-efs-operator held: 2.0.0 waits for approval (upgradeApproval: Manual), and nothing is installed until it is approved"))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "efs-held"}, &rukpakv1alpha2.BundleDeployment{}))).To(BeTrue(), "no BundleDeployment is written for a held create")
	}, SpecTimeout(8*time.Minute))
})

// catalogApp is the adapter's App of the BundleDeployment name.
func catalogApp(ctx context.Context, name string) *kappctrlv1alpha1.App {
	GinkgoHelper()
	var apps kappctrlv1alpha1.AppList
	Expect(env.Client.List(ctx, &apps)).To(Succeed())
	for i, a := range apps.Items {
		for _, o := range a.OwnerReferences {
			if o.Kind == "BundleDeployment" && o.Name == name {
				return &apps.Items[i]
			}
		}
	}
	Fail("no App of BundleDeployment " + name)
	return nil
}

// packageInstallStatus is what kctrl package installed get prints of the
// PackageInstall's last reconcile: its useful error message, else its
// conditions' messages.
func packageInstallStatus(ctx context.Context, ns, name string) (string, error) {
	pi := &packagingv1alpha1.PackageInstall{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi); err != nil {
		return "", err
	}
	msgs := []string{pi.Status.UsefulErrorMessage}
	for _, c := range pi.Status.Conditions {
		msgs = append(msgs, c.Message)
	}
	return strings.Join(msgs, "\n"), nil
}
