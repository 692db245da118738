package reconciler_test

import (
	"context"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

func setClass(ctx context.Context, name, class string) {
	bd := bdtest.MustBD(ctx, name)
	before := bd.DeepCopy()
	bd.Spec.ProvisionerClassName = class
	Expect(env.Client.Patch(ctx, bd, client.MergeFrom(before))).To(Succeed())
}

var _ = Describe("a BundleDeployment whose class changes", func() {
	It("is released without deleting what it installed, and taken back when the class returns", func(ctx context.Context) {
		const name = "class-change"
		ref, _, err := env.TLSRegistry.PushDir(bdtest.Testdata("rukpak-bundles", "plain-v0", "valid"), "class-change/bundle:v1")
		Expect(err).NotTo(HaveOccurred())
		bdtest.PlainBD(ctx, name, ref, func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Image.InsecureSkipTLSVerify = true })
		appFor(ctx, name, 1)
		holdApp(name)
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(contentSecrets(ctx, name)).NotTo(BeEmpty())
		stored := bdtest.MustBD(ctx, name).Status

		setClass(ctx, name, "example-com-other")
		// kapp-controller is told to put Helm's ownership back and to leave
		// the objects in place when the App goes; once it deployed that, the
		// App goes.
		Eventually(func(g Gomega) {
			app, err := bdtest.GetApp(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(app.Spec.NoopDelete).To(BeTrue())
			g.Expect(app.Annotations).To(HaveKeyWithValue(translate.AnnotationReleased, translate.ReleasedAdoptable))
			g.Expect(app.DeletionTimestamp.IsZero()).To(BeTrue(), "not deleted before kapp-controller deployed the hand-back")
		}).WithContext(ctx).Should(Succeed())
		appSucceeded(ctx, name, "")
		Eventually(func(g Gomega) {
			app, err := bdtest.GetApp(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(app.DeletionTimestamp.IsZero()).To(BeFalse())
		}).WithContext(ctx).Should(Succeed())
		app, err := bdtest.GetApp(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		controllerutil.RemoveFinalizer(app, translate.KappControllerFinalizer)
		Expect(env.Client.Update(ctx, app)).To(Succeed())

		Eventually(bdtest.GetBD(ctx, name)).Should(HaveField("Finalizers", Not(ContainElement(adapter.Finalizer))))
		Eventually(func() []string { return contentSecrets(ctx, name) }).Should(BeEmpty())
		Expect(bdtest.MustBD(ctx, name).Status).To(Equal(stored), "the status is left to whoever claims the class now")

		setClass(ctx, name, rukpakv1alpha2.ClassPlain)
		Eventually(bdtest.GetBD(ctx, name)).Should(HaveField("Finalizers", ContainElement(adapter.Finalizer)))
		appFor(ctx, name, 3)
	})

	It("can be deleted after it was released", func(ctx context.Context) {
		const name = "class-change-delete"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		setClass(ctx, name, "example-com-other")
		Expect(env.Client.Delete(ctx, bdtest.MustBD(ctx, name))).To(Succeed())
		Eventually(func(g Gomega) {
			app, err := bdtest.GetApp(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(app.Annotations).To(HaveKey(translate.AnnotationReleased))
		}).WithContext(ctx).Should(Succeed())
		appSucceeded(ctx, name, "")
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: name}, &rukpakv1alpha2.BundleDeployment{}))
		}).WithTimeout(15 * time.Second).Should(BeTrue())
	})
})

var _ = Describe("a class change while kapp-controller deploys", func() {
	It("stops the deploy in flight, hands back without waiting for readiness, and says what it waits for", func(ctx context.Context) {
		const name = "class-change-inflight"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		// kapp-controller runs the App and waits for a workload that never
		// becomes ready.
		appDeploying(ctx, name, pinned["plain-v0/valid"])

		setClass(ctx, name, "example-com-other")
		Eventually(func(g Gomega) {
			app, err := bdtest.GetApp(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(app.Spec.Canceled).To(BeTrue(), "the deploy in flight is stopped")
			g.Expect(app.Annotations).NotTo(HaveKey(translate.AnnotationReleased), "released only once the deploy stopped")
		}).WithContext(ctx).Should(Succeed())
		Eventually(func() ([]string, error) { return bdtest.EventNotes(ctx, name) }).WithContext(ctx).
			Should(ContainElement(ContainSubstring("stop the deploy in flight")))

		// kapp-controller kills kapp, and observes the canceled spec without
		// touching the condition it had.
		setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
			st.Conditions = appCondition(kappctrlv1alpha1.Reconciling)
		})
		Eventually(func(g Gomega) {
			app, err := bdtest.GetApp(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(app.Annotations).To(HaveKeyWithValue(translate.AnnotationReleased, translate.ReleasedAdoptable))
			g.Expect(app.Spec.Canceled).To(BeFalse(), "the hand-back runs")
			g.Expect(app.Spec.NoopDelete).To(BeTrue())
			g.Expect(app.Spec.Deploy[0].Kapp.RawOptions).To(ContainElement("--wait=false"), "the hand-back does not wait for readiness")
		}).WithContext(ctx).Should(Succeed())

		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Expect(env.Client.Delete(ctx, bdtest.MustBD(ctx, name))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: name}, &rukpakv1alpha2.BundleDeployment{}))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(BeTrue())
	})
})

// staleReader serves one BundleDeployment as it was read earlier, as an
// informer cache that has not caught up does.
type staleReader struct {
	client.Client
	stale *rukpakv1alpha2.BundleDeployment
}

func (s staleReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if bd, ok := obj.(*rukpakv1alpha2.BundleDeployment); ok && key.Name == s.stale.Name {
		s.stale.DeepCopyInto(bd)
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

var _ = Describe("the uninstall finalizer", func() {
	It("is added without dropping a finalizer another controller added since the adapter's read", func(ctx context.Context) {
		const name = "finalizer-race"
		// A class nobody claims, so only the reconciler driven below acts.
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.ProvisionerClassName = "example-com-nobody"
		})
		stale := bdtest.MustBD(ctx, name)
		stale.Spec.ProvisionerClassName = rukpakv1alpha2.ClassPlain

		live := bdtest.MustBD(ctx, name)
		controllerutil.AddFinalizer(live, "example.com/other")
		Expect(env.Client.Update(ctx, live)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			bd := bdtest.MustBD(ctx, name)
			bd.Finalizers = nil
			Expect(env.Client.Update(ctx, bd)).To(Succeed())
		})

		classes, err := adapter.ParseClasses([]string{rukpakv1alpha2.ClassPlain})
		Expect(err).NotTo(HaveOccurred())
		apis, err := adapter.ServedAPIs(env.ControlPlane.Config)
		Expect(err).NotTo(HaveOccurred())
		r := adapter.NewBundleDeploymentReconciler(staleReader{Client: env.Client, stale: stale}, env.Client,
			translate.Config{SystemNamespace: harness.SystemNamespace, ServiceAccountName: "rukpak-kapp-installer", SyncPeriod: time.Minute}, classes, nil, apis)
		_, _ = r.Reconcile(ctx, reconcileRequest(name))
		Expect(bdtest.MustBD(ctx, name).Finalizers).To(ContainElement("example.com/other"))
	})
})

func reconcileRequest(name string) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKey{Name: name}}
}
