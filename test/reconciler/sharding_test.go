package reconciler_test

import (
	"context"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The app namespaces of config/sharding.
var shards = []string{"rukpak-apps-0", "rukpak-apps-1"}

// shardOf is where a new App of name goes with shards.
func shardOf(name string) string {
	return translate.Placement(translate.Config{SystemNamespace: harness.SystemNamespace, AppNamespaces: shards}, name)
}

func getAppIn(ctx context.Context, ns, name string) (*kappctrlv1alpha1.App, error) {
	app := &kappctrlv1alpha1.App{}
	return app, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app)
}

// appSucceededIn writes a successful deploy of the App's current spec.
func appSucceededIn(ctx context.Context, ns, name string) {
	GinkgoHelper()
	Eventually(func() error {
		app, err := getAppIn(ctx, ns, name)
		if err != nil {
			return err
		}
		now := metav1.Now()
		app.Status = kappctrlv1alpha1.AppStatus{
			Fetch: fetchOK(""), Template: &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: now},
			Deploy: &kappctrlv1alpha1.AppStatusDeploy{StartedAt: now, UpdatedAt: now, Finished: true},
		}
		app.Status.Conditions = appCondition(kappctrlv1alpha1.ReconcileSucceeded)
		app.Status.ObservedGeneration = app.Generation
		return env.Client.Status().Update(ctx, app)
	}).WithContext(ctx).Should(Succeed())
}

func secretIn(ctx context.Context, ns, name string) func() (*corev1.Secret, error) {
	return func() (*corev1.Secret, error) {
		s := &corev1.Secret{}
		return s, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
	}
}

var _ = Describe("Apps spread over app namespaces (--app-namespaces)", Serial, Ordered, func() {
	BeforeAll(func(ctx context.Context) {
		rendered, err := env.Kustomize(ctx, "config/sharding/app-namespaces")
		Expect(err).NotTo(HaveOccurred())
		_, err = harness.ApplyYAML(ctx, env.Client, rendered)
		Expect(err).NotTo(HaveOccurred())
		appNamespaces = shards
		restartAdapter(ctx)
		DeferCleanup(func(ctx context.Context) {
			appNamespaces = nil
			restartAdapter(ctx)
		})
	})

	It("places each App by its name, with a copy of the Secret it names kept current", func(ctx context.Context) {
		const name, pull = "shard-pull", "shard-pull-secret"
		ns := shardOf(name)
		original := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: pull},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)},
		}
		Expect(env.Client.Create(ctx, original)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, original) })
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.ImagePullSecretName = pull
		})

		Eventually(func() error { _, err := getAppIn(ctx, ns, name); return err }).Should(Succeed())
		_, err := bdtest.GetApp(ctx, name)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no App in the system namespace")
		Eventually(secretIn(ctx, ns, pull)).Should(And(
			HaveField("Type", corev1.SecretTypeDockerConfigJson),
			HaveField("Data", Equal(original.Data)),
			HaveField("Labels", HaveKeyWithValue(adapter.LabelMirror, "true")),
			HaveField("OwnerReferences", ContainElement(HaveField("Name", name))),
		))
		appSucceededIn(ctx, ns, name)
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))

		By("changing the original: the copy follows")
		before := original.DeepCopy()
		original.Data[corev1.DockerConfigJsonKey] = []byte(`{"auths":{"example.com":{}}}`)
		Expect(env.Client.Patch(ctx, original, client.MergeFrom(before))).To(Succeed())
		Eventually(secretIn(ctx, ns, pull)).Should(HaveField("Data", Equal(original.Data)))

		By("deleting the copy by hand: it comes back")
		Expect(env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pull}})).To(Succeed())
		Eventually(secretIn(ctx, ns, pull)).Should(HaveField("Data", Equal(original.Data)))
	})

	It("copies the ConfigMaps of a configMaps source", func(ctx context.Context) {
		const name = "shard-configmaps"
		ns := shardOf(name)
		bdtest.ConfigMapFrom(ctx, "shard-configmaps-part", bdtest.Testdata("rukpak-bundles", "plain-v0", "valid", "manifests"))
		bdtest.ConfigMapsBD(ctx, name, "shard-configmaps-part")
		Eventually(func() error { _, err := getAppIn(ctx, ns, name); return err }).Should(Succeed())
		original := &corev1.ConfigMap{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: "shard-configmaps-part"}, original)).To(Succeed())
		Expect(original.Data).NotTo(BeEmpty())
		Eventually(func() (*corev1.ConfigMap, error) {
			cm := &corev1.ConfigMap{}
			return cm, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shard-configmaps-part"}, cm)
		}).Should(And(
			HaveField("Data", Equal(original.Data)),
			HaveField("Labels", HaveKeyWithValue(adapter.LabelMirror, "true")),
		))
	})

	It("stores the content the adapter fetches alongside the App", func(ctx context.Context) {
		const name = "shard-content"
		ns := shardOf(name)
		ref, _, err := env.TLSRegistry.PushDir(bdtest.Testdata("rukpak-bundles", "plain-v0", "valid"), "shard-content/bundle:v1")
		Expect(err).NotTo(HaveOccurred())
		bdtest.PlainBD(ctx, name, ref, func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Image.InsecureSkipTLSVerify = true })
		var app *kappctrlv1alpha1.App
		Eventually(func() (err error) { app, err = getAppIn(ctx, ns, name); return err }).Should(Succeed())
		Expect(app.Spec.Fetch[0].Inline).NotTo(BeNil())
		Expect(app.Spec.Fetch[0].Inline.PathsFrom).NotTo(BeEmpty())
		for _, p := range app.Spec.Fetch[0].Inline.PathsFrom {
			Expect(secretIn(ctx, ns, p.SecretRef.Name)()).To(HaveField("Labels", HaveKeyWithValue(adapter.LabelContent, "true")))
		}
	})

	It("keeps an App that exists already where it is", func(ctx context.Context) {
		const name = "shard-legacy"
		legacy := &kappctrlv1alpha1.App{
			ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: name, Labels: translate.OwnerLabels(name)},
			Spec: kappctrlv1alpha1.AppSpec{
				ServiceAccountName: "rukpak-kapp-installer",
				Fetch:              []kappctrlv1alpha1.AppFetch{{Image: &kappctrlv1alpha1.AppFetchImage{URL: images["plain-v0/valid"]}}},
				Template:           []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{}}},
				Deploy:             []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}},
			},
		}
		Expect(env.Client.Create(ctx, legacy)).To(Succeed())
		// Gone with its BundleDeployment; a spec that failed must not leave it
		// behind, a never-run App that stall repair would count as
		// kapp-controller busy.
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, legacy))).To(Succeed()) })
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		for _, ns := range shards {
			Consistently(func() bool {
				_, err := getAppIn(ctx, ns, name)
				return apierrors.IsNotFound(err)
			}, time.Second).Should(BeTrue(), "no second App in %s", ns)
		}
	})
})
