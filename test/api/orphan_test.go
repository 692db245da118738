package api_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// No garbage collector runs here: the API server's own part of an orphaning
// delete (the finalizer orphan) stays until this spec removes it, as the
// garbage collector would.
var _ = Describe("the orphan policy (config/catalogs)", func() {
	It("keeps the finalizer orphan on an OperatorInstall deleted with --cascade=orphan until the install's controller has let go", func(ctx context.Context) {
		oi := &catalogsv1alpha1.OperatorInstall{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan-policy", Finalizers: []string{operatorinstall.Finalizer}},
			Spec: catalogsv1alpha1.OperatorInstallSpec{PackageName: "efs", Channel: "stable", RefName: "stable.efs.example.com", Version: "1.0.0",
				Bundle: "efs.v1.0.0", Image: "registry.example/efs:1.0.0", InstallNamespace: "efs"},
		}
		Expect(env.Client.Create(ctx, oi)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(client.IgnoreNotFound(env.Client.Patch(ctx, &catalogsv1alpha1.OperatorInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan-policy"}},
				client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
		})
		Expect(env.Client.Delete(ctx, oi, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(oi), oi)).To(Succeed())
		Expect(oi.Finalizers).To(ConsistOf(operatorinstall.Finalizer, metav1.FinalizerOrphanDependents), "the API server's mark of an orphaning delete")

		By("the garbage collector's removal of orphan, before the controller let go, is refused")
		// Policies are loaded asynchronously after they are created.
		Eventually(func() error {
			return env.Client.Patch(ctx, oi.DeepCopy(), client.RawPatch("application/json-patch+json",
				[]byte(`[{"op":"test","path":"/metadata/finalizers/1","value":"orphan"},{"op":"remove","path":"/metadata/finalizers/1"}]`)))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(And(
			WithTransform(apierrors.IsInvalid, BeTrue()),
			MatchError(ContainSubstring("rukpak-kapp-operatorinstall-orphan")),
			MatchError(ContainSubstring("the finalizer orphan stays until rukpak-kapp's OperatorInstall controller has removed catalogs.rukpak-kapp.dev/uninstall"))))

		By("the controller lets go, then the garbage collector removes orphan")
		Expect(env.Client.Patch(ctx, oi.DeepCopy(), client.RawPatch("application/json-patch+json",
			[]byte(`[{"op":"test","path":"/metadata/finalizers/0","value":"catalogs.rukpak-kapp.dev/uninstall"},{"op":"remove","path":"/metadata/finalizers/0"}]`)))).To(Succeed())
		Expect(env.Client.Patch(ctx, oi.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(oi), oi))).To(BeTrue())

		By("an install deleted without orphaning is not held")
		other := &catalogsv1alpha1.OperatorInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan-policy-background", Finalizers: []string{operatorinstall.Finalizer}}, Spec: oi.Spec}
		Expect(env.Client.Create(ctx, other)).To(Succeed())
		Expect(env.Client.Delete(ctx, other)).To(Succeed())
		Expect(env.Client.Patch(ctx, other.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
	})
})
