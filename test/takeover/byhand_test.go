package takeover_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// unclaimed is a class neither rukpak nor the adapter claims: the test
// does what the reconciler is to do, with the same functions, so the
// mechanism is checked against the real kapp-controller and rukpak.
const unclaimed = "by-hand"

var installerConfig = translate.Config{SystemNamespace: harness.SystemNamespace, ServiceAccountName: "rukpak-kapp-installer", SyncPeriod: 10 * time.Minute}

func byHand() {
	const name = "by-hand"
	var objects []*unstructured.Unstructured
	var before map[takeover.Ref]state

	BeforeAll(func(ctx context.Context) {
		Expect(rukpak.Start(ctx)).To(Succeed())
		// A plain bundle of its own from ConfigMaps: no cluster-scoped
		// object that another context's BundleDeployment may hold.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-manifests", Namespace: harness.SystemNamespace}, Data: map[string]string{}}
		for _, f := range []string{"deployment.yaml", "service.yaml", "settings.yaml"} {
			data, err := os.ReadFile(filepath.Join("testdata", "plain", "manifests", f))
			Expect(err).NotTo(HaveOccurred())
			cm.Data[f] = string(data)
		}
		Expect(env.Client.Create(ctx, cm)).To(Succeed())
		newBD(ctx, name, rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{
			Type:       rukpakv1alpha2.SourceTypeConfigMaps,
			ConfigMaps: []rukpakv1alpha2.ConfigMapSource{{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: cm.Name}, Path: "manifests"}},
		}, "")
		Eventually(getBD(ctx, name)).WithTimeout(3 * time.Minute).Should(installedByRukpak())
		objects = installedObjects(ctx, mustBD(ctx, name))
		before = snapshot(ctx, objects)
		// From here on nobody reconciles it but the test.
		setClass(ctx, name, unclaimed)
	}, NodeTimeout(4*time.Minute))

	AfterAll(func(ctx context.Context) {
		setClass(ctx, name, rukpakv1alpha2.ClassPlain)
		deleteAndWait(ctx, name)
	}, NodeTimeout(3*time.Minute))

	It("takes over in place: rukpak's release through an as-bundled App, owner references and Helm metadata gone, nothing rolled", func(ctx context.Context) {
		// rukpak v0.24.0 still runs a reconcile queued before the class
		// change (deleting its release Secret below queues one) and then
		// installs the BundleDeployment it no longer claims over kapp's
		// apply; seen once in six runs. The migration guide stops rukpak
		// for a take-over; the hand-back starts it again.
		rukpak.Stop()
		bd := mustBD(ctx, name)
		view := bd.DeepCopy()
		view.Spec.ProvisionerClassName = rukpakv1alpha2.ClassPlain
		in, err := adapter.TakeOverInput(ctx, env.Client, env.Client.RESTMapper(), harness.SystemNamespace, view, true)
		Expect(err).NotTo(HaveOccurred())
		plan := takeover.Take(in)
		Expect(plan.Blockers).To(BeEmpty())

		files, err := takeover.Files(takeover.TakeOverObjects(in))
		Expect(err).NotTo(HaveOccurred())
		chunks, err := content.Pack(bd.Name, files)
		Expect(err).NotTo(HaveOccurred())
		refs := &translate.Packed{}
		for _, ch := range chunks {
			Expect(env.Client.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: ch.Name, Namespace: harness.SystemNamespace, OwnerReferences: translate.OwnerReferences(bd)},
				Data:       ch.Data,
			})).To(Succeed())
			refs.Secrets = append(refs.Secrets, translate.ContentSecret{Name: ch.Name, Dir: ch.Dir})
		}
		for _, s := range plan.Cleanup.ReleaseSecrets {
			Expect(env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s, Namespace: harness.SystemNamespace}})).To(Succeed())
		}
		asPlain := bd.DeepCopy()
		asPlain.Spec.ProvisionerClassName = rukpakv1alpha2.ClassPlain
		app, err := translate.AppInStyle(asPlain, installerConfig, refs, translate.StyleAsBundled)
		Expect(err).NotTo(HaveOccurred())
		app.Annotations[takeover.AnnotationTakenOver] = fmt.Sprint(bd.Generation)
		Expect(env.Client.Create(ctx, app)).To(Succeed())
		waitDeployed(ctx, name)

		Expect(snapshot(ctx, objects)).To(Equal(before), "an object was recreated, or a Deployment got a new ReplicaSet")
		planCameTrue(ctx, &plan)
		for _, ref := range refsOf(objects) {
			u, err := live(ctx, ref)
			Expect(err).NotTo(HaveOccurred())
			Expect(ownedByBundleDeployment(u)).To(BeFalse(), "%s", ref)
			Expect(u.GetAnnotations()).To(HaveKey("kapp.k14s.io/disable-default-label-scoping-rules"), "%s", ref)
		}
	}, NodeTimeout(3*time.Minute))

	It("hands back in place: kapp restores Helm's ownership, the App goes with noopDelete, rukpak adopts", func(ctx context.Context) {
		Expect(rukpak.Start(ctx)).To(Succeed())
		bd := mustBD(ctx, name)
		app := &kappctrlv1alpha1.App{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)).To(Succeed())
		var liveObjs []*unstructured.Unstructured
		for _, ref := range refsOf(objects) {
			u, err := live(ctx, ref)
			Expect(err).NotTo(HaveOccurred())
			liveObjs = append(liveObjs, u)
		}
		back := takeover.Back(bd, app, liveObjs, objects, nil)
		Expect(back.Adoptable).To(BeTrue(), "%q", back.Reasons)
		released, err := translate.Released(app, bd, back.Adoptable)
		Expect(err).NotTo(HaveOccurred())
		released.ResourceVersion = app.ResourceVersion
		Expect(env.Client.Update(ctx, released)).To(Succeed())
		waitDeployed(ctx, name)
		for _, o := range back.Objects {
			u, err := live(ctx, o.Ref)
			Expect(err).NotTo(HaveOccurred())
			checkMap(o.Ref, "label", u.GetLabels(), o.Labels)
			checkMap(o.Ref, "annotation", u.GetAnnotations(), o.Annotations)
			Expect(ownedByBundleDeployment(u)).To(BeTrue(), "%s", o.Ref)
		}

		Expect(env.Client.Delete(ctx, released)).To(Succeed())
		Eventually(func() error { _, err := getApp(ctx, name); return err }).WithTimeout(time.Minute).Should(Satisfy(apierrors.IsNotFound))
		Expect(snapshot(ctx, objects)).To(Equal(before), "deleting the released App deleted or recreated something")

		setClass(ctx, name, rukpakv1alpha2.ClassPlain)
		Eventually(getBD(ctx, name)).WithTimeout(2*time.Minute).Should(installedByRukpak(), "rukpak did not adopt the objects")
		Expect(releaseSecrets(ctx, mustBD(ctx, name))).NotTo(BeEmpty())
		Expect(snapshot(ctx, objects)).To(Equal(before), "an object was recreated, or a Deployment got a new ReplicaSet")
	}, NodeTimeout(5*time.Minute))
}

// waitDeployed waits until kapp-controller deployed the App's current spec.
func waitDeployed(ctx context.Context, name string) {
	EventuallyWithOffset(1, func(g Gomega) {
		app := &kappctrlv1alpha1.App{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)).To(Succeed())
		g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.Conditions).To(ContainElement(HaveField("Type", kappctrlv1alpha1.ReconcileSucceeded)), app.Status.UsefulErrorMessage)
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
}
