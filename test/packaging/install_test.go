package packaging_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// operatorInstall is the OperatorInstall of the PackageInstall ns/name,
// which its catalog Package's template rendered.
func operatorInstall(ctx context.Context, ns, name string) *catalogsv1alpha1.OperatorInstall {
	GinkgoHelper()
	oi := &catalogsv1alpha1.OperatorInstall{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, oi)).To(Succeed())
	return oi
}

// installCondition is the OperatorInstall ns/name's condition of type t
// (nil: none).
func installCondition(ctx context.Context, ns, name, t string) *metav1.Condition {
	GinkgoHelper()
	return meta.FindStatusCondition(operatorInstall(ctx, ns, name).Status.Conditions, t)
}

// upgradeNotice is the OperatorInstall ns/name's UpgradeAvailable
// condition: its status, reason and message.
func upgradeNotice(ctx context.Context, ns, name string) (string, error) {
	oi := &catalogsv1alpha1.OperatorInstall{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, oi); err != nil {
		return "", err
	}
	c := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeUpgradeAvailable)
	if c == nil {
		return "", nil
	}
	return string(c.Status) + " " + c.Reason + " " + c.Message, nil
}

// installIsInstalled says the OperatorInstall ns/name's current
// generation is installed.
func installIsInstalled(ctx context.Context, ns, name string) bool {
	oi := &catalogsv1alpha1.OperatorInstall{}
	if env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, oi) != nil {
		return false
	}
	c := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == oi.Generation
}

// installedVersion is the version the OperatorInstall ns/name says runs.
func installedVersion(ctx context.Context, ns, name string) string {
	oi := &catalogsv1alpha1.OperatorInstall{}
	if env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, oi) != nil || oi.Status.Installed == nil {
		return ""
	}
	return oi.Status.Installed.Version
}

// upgradeSteps are the notes of the UpgradeStep Events recorded about the
// OperatorInstall ns/name, oldest first. The adapter sends Events in the
// background, so callers poll it.
func upgradeSteps(ctx context.Context, ns, name string) ([]string, error) {
	return eventNotes(ctx, ns, "OperatorInstall", name, operatorinstall.ReasonUpgradeStep)
}
