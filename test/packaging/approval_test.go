package packaging_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// upgradeApproval: Manual, as OLM v0's installPlanApproval: Manual, on the
// walk catalog of aws-efs-operator (1.0.0 ← 1.1.0 ← 1.2.0 ← 2.0.0, then
// 2.1.0), through the calls kctrl makes: an install that follows its
// channel holds when the channel moves, installs exactly the version
// approved, and holds again at the next.
var _ = Describe("manual approval of a channel-following install", func() {
	It("holds a new version until it is approved, installs exactly that one, and holds the next", func(ctx context.Context) {
		const ns, install, installNS = "catalog-approval", "efs", "catalog-approval-op"
		bdName := install + "." + ns
		createNamespace(ctx, ns)
		installEfs(ctx, ns, install, installNS, pushWalkCatalog(ctx, "approval", ""))
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		installedGen := bd.Generation

		By("kctrl package installed update -i efs --values-file (upgradeApproval: Manual), then --version '>= 0.0.0': 2.0.0 is held")
		manual := "installNamespace: " + installNS + "\nupgradeApproval: Manual\n"
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install, []byte(manual))
		})).To(Succeed())
		err := kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, ">= 0.0.0")
		})
		Expect(err).To(HaveOccurred(), "kctrl reports the held upgrade")
		Expect(strings.Join(strings.Fields(err.Error()), " ")).To(And(
			ContainSubstring("upgrade of aws-efs-operator held: 2.0.0 waits for approval (upgradeApproval: Manual), and 1.0.0 stays installed"),
			ContainSubstring("rukpak-kapp upgrade plan efs -n "+ns+" --to 2.0.0"),
			ContainSubstring(`approvedVersion: "2.0.0"`)))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Generation).To(Equal(installedGen), "nothing is installed early")
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v1.0.0"))
		Expect(installedAt(bd)).To(BeTrue(), "Installed stays the version that runs: %+v", bd.Status.Conditions)
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(bdName).Should(And(
			HavePrefix("True UpgradeAwaitingApproval Channel stable offers 2.0.0 beyond 1.0.0"),
			ContainSubstring("it waits for approval (upgradeApproval: Manual)")))

		By("kctrl package installed update -i efs --values-file (approvedVersion: 2.0.0): the walk installs 1.1.0, 1.2.0, 2.0.0")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install, []byte(manual+"approvedVersion: \"2.0.0\"\n"))
		})).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.0.0"))
		Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
		Expect(meta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled).Message).To(
			ContainSubstring("upgraded along channel stable one edge at a time: 1.0.0 → 1.1.0 → 1.2.0 → 2.0.0"))
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(bdName).Should(Equal("False AtChannelHead 2.0.0, the version installed, is the head of channel stable"))
		approvedGen := bd.Generation

		By("a new catalog version with 2.1.0; kctrl package repository update: kapp-controller asks for 2.1.0, which the approval of 2.0.0 does not cover")
		Expect(harness.KctrlRepositoryUpdate(ctx, env.ControlPlane.Config, ns, "efs", pushWalkCatalog(ctx, "approval", "", "2.1.0"))).To(Succeed())
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(bdName).WithTimeout(15 * time.Second).Should(And(
			HavePrefix("True UpgradeAwaitingApproval Channel stable offers 2.1.0 beyond 2.0.0"),
			ContainSubstring(`approvedVersion: "2.1.0"`)))
		Eventually(func(g Gomega) {
			st, err := packageInstallStatus(ctx, ns, install)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(strings.Join(strings.Fields(st), " ")).To(ContainSubstring("2.1.0 waits for approval (upgradeApproval: Manual), and 2.0.0 stays installed (the version approved is 2.0.0)"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Generation).To(Equal(approvedGen), "2.1.0 waits: nothing changed")
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.0.0"))
		Expect(installedAt(bd)).To(BeTrue())
	}, SpecTimeout(6*time.Minute))
})

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
