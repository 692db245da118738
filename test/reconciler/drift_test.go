package reconciler_test

import (
	"context"
	"sync/atomic"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/drift"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// appDeployed writes what kapp-controller reports after deploying the App's
// current spec: the kinds it installed, and when the deploy began.
func appDeployed(ctx context.Context, name string, began time.Time, kinds ...metav1.GroupKind) {
	setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
		now := metav1.NewTime(began)
		st.Conditions = appCondition(kappctrlv1alpha1.ReconcileSucceeded)
		st.Fetch = fetchOK("")
		st.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: now}
		st.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: now, UpdatedAt: now, Finished: true,
			KappDeployStatus: &kappctrlv1alpha1.KappDeployStatus{AssociatedResources: kappctrlv1alpha1.AssociatedResources{
				Label: "kapp.k14s.io/app=1", Namespaces: []string{"default"}, GroupKinds: kinds,
			}}}
		st.ConsecutiveReconcileSuccesses = 1
	})
}

// installedConfigMap creates a ConfigMap as kapp installs one for the
// BundleDeployment bd: with the owner labels, written by kapp.
func installedConfigMap(ctx context.Context, bd, name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: translate.OwnerLabels(bd)},
		Data:       map[string]string{"mode": "strict"},
	}
	Expect(env.Client.Create(ctx, cm, client.FieldOwner(drift.KappManager))).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, cm) })
	return cm
}

func setMode(ctx context.Context, cm *corev1.ConfigMap, mode, writer string) {
	GinkgoHelper()
	live := &corev1.ConfigMap{}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cm), live)).To(Succeed())
	before := live.DeepCopy()
	live.Data["mode"] = mode
	Expect(env.Client.Patch(ctx, live, client.MergeFrom(before), client.FieldOwner(writer))).To(Succeed())
}

func appGeneration(ctx context.Context, name string) func() (int64, error) {
	return func() (int64, error) {
		app, err := bdtest.GetApp(ctx, name)
		if err != nil {
			return 0, err
		}
		return app.Generation, nil
	}
}

var configMapKind = metav1.GroupKind{Kind: "ConfigMap"}

// installedWithConfigMap makes a BundleDeployment whose App kapp-controller
// reports deployed, with one installed ConfigMap (name-settings); it returns
// the ConfigMap and the App's generation. ConfigMaps are watched from the
// adapter's start, so a change right after the report is seen.
func installedWithConfigMap(ctx context.Context, name string) (*corev1.ConfigMap, int64) {
	GinkgoHelper()
	bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
	appFor(ctx, name, 1)
	cm := installedConfigMap(ctx, name, name+"-settings")
	appDeployed(ctx, name, time.Now(), configMapKind)
	gen, err := appGeneration(ctx, name)()
	Expect(err).NotTo(HaveOccurred())
	return cm, gen
}

var _ = Describe("drift repair", func() {
	It("re-applies the App when an installed object is changed or deleted by someone other than kapp, and not for kapp's own writes", func(ctx context.Context) {
		const name = "drift-repair"
		cm, gen := installedWithConfigMap(ctx, name)

		By("an edit by hand: one re-apply, the spec unchanged, the App never paused")
		setMode(ctx, cm, "loose", "someone-by-hand")
		Eventually(appGeneration(ctx, name), 5*time.Second).Should(Equal(gen + 1))
		app, err := bdtest.GetApp(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Spec.Paused).To(BeFalse())
		Expect(app.Status.ObservedGeneration).To(Equal(gen), "kapp-controller has a new generation to deploy")
		Expect(bdtest.MustBD(ctx, name)).To(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""),
			"a re-apply of what is installed is not news")
		Eventually(func() ([]string, error) { return bdtest.EventNotes(ctx, name) }).Should(ContainElement(ContainSubstring("ConfigMap default/drift-repair-settings was changed")))
		appDeployed(ctx, name, time.Now(), configMapKind)

		By("kapp rewriting the object: no re-apply")
		for i := range 5 {
			setMode(ctx, cm, "strict-"+string(rune('a'+i)), drift.KappManager)
			time.Sleep(200 * time.Millisecond)
		}
		// Longer than the 5 s a second re-apply would wait.
		Consistently(appGeneration(ctx, name), 7*time.Second).Should(Equal(gen + 1))

		By("another edit by hand, quiet for long enough: at once")
		setMode(ctx, cm, "loose", "someone-by-hand")
		// Well under the 5 s a re-apply in backoff would wait.
		Eventually(appGeneration(ctx, name), 3*time.Second).Should(Equal(gen + 2))
		second := time.Now()

		By("a delete while kapp-controller runs the re-apply waits for the run to end, then for the backoff")
		began := time.Now()
		Expect(env.Client.Delete(ctx, cm)).To(Succeed())
		Consistently(appGeneration(ctx, name), 2*time.Second).Should(Equal(gen + 2))
		// That run's deploy began before the delete, so it did not repair it.
		appDeployed(ctx, name, began, configMapKind)
		// The third re-apply in a row waits 10 s after the second, not only
		// for the run to end (about 3 s after it).
		Eventually(appGeneration(ctx, name), 12*time.Second).Should(Equal(gen + 3))
		Expect(time.Since(second)).To(BeNumerically(">=", 9*time.Second), "the re-apply waited for the backoff")
		Eventually(func() ([]string, error) { return bdtest.EventNotes(ctx, name) }).Should(ContainElement(ContainSubstring("ConfigMap default/drift-repair-settings was deleted")))
	})

	It("leaves deletes to kapp while a new spec is deployed", func(ctx context.Context) {
		const name = "drift-upgrade"
		cm, _ := installedWithConfigMap(ctx, name)

		setImage(ctx, name, images["plain-v0/subdir"])
		appFor(ctx, name, 2)
		gen, err := appGeneration(ctx, name)()
		Expect(err).NotTo(HaveOccurred())
		// kapp prunes what the new bundle no longer holds, while the App
		// still says its new spec is being deployed: the adapter leaves it.
		prunes := counter("rukpak_kapp_drift_prunes_total", nil)
		Expect(env.Client.Delete(ctx, cm)).To(Succeed())
		Eventually(func() float64 { return counter("rukpak_kapp_drift_prunes_total", nil) }).Should(Equal(prunes+1),
			"the adapter took the delete during the deploy for kapp's prune")
		// Then the deploy is reported, begun before the delete. Had the
		// delete been taken for a change by hand, the report would have it
		// re-applied at once.
		appDeployed(ctx, name, time.Now().Add(-time.Minute), configMapKind)
		Eventually(func() (bool, error) {
			seen := &kappctrlv1alpha1.App{}
			err := adapterCache.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, seen)
			return seen.Status.Deploy != nil && seen.Status.Deploy.Finished, err
		}).Should(BeTrue())
		Consistently(appGeneration(ctx, name), time.Second).Should(Equal(gen))
		Expect(bdtest.EventNotes(ctx, name)).NotTo(ContainElement(ContainSubstring("was deleted")))
	})

	It("keeps a fight with another writer bounded", func(ctx context.Context) {
		const name = "drift-fight"
		cm, gen := installedWithConfigMap(ctx, name)

		By("kapp-controller's part: every new generation is deployed at once, and kapp restores the value")
		// The spec's context, not a cancelled one, serves every call: the loop
		// ends between two deploys, and the spec waits for it.
		var fighting atomic.Bool
		fighting.Store(true)
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			seen := gen
			for fighting.Load() {
				if g, err := appGeneration(ctx, name)(); err == nil && g != seen {
					seen = g
					live := &corev1.ConfigMap{}
					if env.Client.Get(ctx, client.ObjectKeyFromObject(cm), live) == nil {
						before := live.DeepCopy()
						live.Data["mode"] = "strict"
						_ = env.Client.Patch(ctx, live, client.MergeFrom(before), client.FieldOwner(drift.KappManager))
					}
					appDeployed(ctx, name, time.Now(), configMapKind)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		By("another writer setting its value every 300 ms for 20 s")
		deadline := time.Now().Add(20 * time.Second)
		for i := 0; time.Now().Before(deadline); i++ {
			setMode(ctx, cm, "fighter-"+string(rune('a'+i%26)), "fighter")
			time.Sleep(300 * time.Millisecond)
		}
		fighting.Store(false)
		<-done
		// Backoff from the first re-apply: 0, 5, 15 s fall in 20 s; a fourth
		// would come at 35 s.
		g, err := appGeneration(ctx, name)()
		Expect(err).NotTo(HaveOccurred())
		Expect(g-gen).To(BeNumerically(">=", 2), "the fight was answered")
		Expect(g-gen).To(BeNumerically("<=", 3), "at most three re-applies in 20 s of fighting")
	})
})
