package e2e_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
)

// deletionBundle is a ConfigMap and a Deployment in namespace default,
// named name; with ready false the Deployment can never be scheduled, so
// kapp waits for it.
func deletionBundle(name string, ready bool) string {
	selector := ""
	if !ready {
		selector = "\n      nodeSelector: {rukpak-kapp.test/never: \"true\"}"
	}
	return dirBundle(name+fmt.Sprint(ready), map[string]string{
		"manifests/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {a: b}\n", name),
		"manifests/deploy.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:%s
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers: [{name: c, image: registry.example/none:v1}]
`, name, name, name, selector),
	})
}

// installedUIDs are the UIDs of name's ConfigMap and Deployment; "" when gone.
func installedUIDs(ctx context.Context, name string) func() [2]types.UID {
	return func() [2]types.UID {
		var out [2]types.UID
		for i, o := range []client.Object{&corev1.ConfigMap{}, &appsv1.Deployment{}} {
			if err := env.Client.Get(ctx, objKey("default", name), o); err == nil {
				out[i] = o.GetUID()
			} else if !apierrors.IsNotFound(err) {
				Fail(err.Error())
			}
		}
		return out
	}
}

func deleteWith(ctx context.Context, name string, policy metav1.DeletionPropagation) time.Time {
	Expect(env.Client.Delete(ctx, &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}},
		client.PropagationPolicy(policy))).To(Succeed())
	return time.Now()
}

var _ = Describe("deleting a BundleDeployment", func() {
	It("with --cascade=orphan keeps every installed object, and the BundleDeployment goes", func(ctx context.Context) {
		const name = "delete-orphan"
		plainBD(ctx, name, deletionBundle(name, true))
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		uids := installedUIDs(ctx, name)()
		Expect(uids[0]).NotTo(BeEmpty())
		Expect(uids[1]).NotTo(BeEmpty())
		DeferCleanup(func(ctx context.Context) {
			_ = env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
			_ = env.Client.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
		})

		at := deleteWith(ctx, name, metav1.DeletePropagationOrphan)
		Eventually(bdGone(ctx, name)).WithTimeout(10 * time.Second).Should(BeTrue())
		GinkgoWriter.Printf("orphaning delete: BundleDeployment gone %v after the delete\n", time.Since(at).Round(100*time.Millisecond))
		Eventually(func() error { _, err := getApp(ctx, name); return err }).Should(Satisfy(apierrors.IsNotFound))
		Consistently(installedUIDs(ctx, name)).WithTimeout(5*time.Second).Should(Equal(uids), "the installed objects keep their UIDs")
	})

	for name, policy := range map[string]metav1.DeletionPropagation{
		"delete-foreground": metav1.DeletePropagationForeground, "delete-background": metav1.DeletePropagationBackground,
	} {
		It(fmt.Sprintf("with propagationPolicy %s removes everything it installed", policy), func(ctx context.Context) {
			plainBD(ctx, name, deletionBundle(name, true))
			Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
			at := deleteWith(ctx, name, policy)
			Eventually(bdGone(ctx, name)).WithTimeout(30 * time.Second).Should(BeTrue())
			GinkgoWriter.Printf("%s delete: BundleDeployment gone %v after the delete\n", policy, time.Since(at).Round(100*time.Millisecond))
			Expect(installedUIDs(ctx, name)()).To(Equal([2]types.UID{}))
		})
	}
})

var _ = Describe("a class change during a deploy that cannot finish", func() {
	It("hands back at once, and a delete afterwards is done within 10 s and removes the objects, as rukpak's would", func(ctx context.Context) {
		const name = "class-inflight"
		plainBD(ctx, name, deletionBundle(name, true))
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		By("an upgrade to a Deployment that can never be scheduled: kapp waits for it")
		setRef(ctx, name, deletionBundle(name, false))
		Eventually(func() string {
			app, _ := getApp(ctx, name)
			if app == nil || len(app.Status.Conditions) == 0 || app.Status.ObservedGeneration != app.Generation {
				return ""
			}
			return app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] + "/" + string(app.Status.Conditions[0].Type)
		}).Should(Equal("2/Reconciling"))
		uids := installedUIDs(ctx, name)()

		By("the class changes away: the deploy is stopped and the objects are handed back in place")
		bd := mustBD(ctx, name)
		before := bd.DeepCopy()
		bd.Spec.ProvisionerClassName = "some-other-class"
		Expect(env.Client.Patch(ctx, bd, client.MergeFrom(before))).To(Succeed())
		changed := time.Now()
		Eventually(getBD(ctx, name)).WithTimeout(10 * time.Second).Should(HaveField("Finalizers", BeEmpty()))
		GinkgoWriter.Printf("class change during a deploy: released %v after the change\n", time.Since(changed).Round(100*time.Millisecond))
		Expect(installedUIDs(ctx, name)()).To(Equal(uids), "the release keeps every object")
		cm := &corev1.ConfigMap{}
		Expect(env.Client.Get(ctx, objKey("default", name), cm)).To(Succeed())
		Expect(cm.Labels).To(HaveKeyWithValue(translate.LabelHelmManagedBy, translate.HelmManagedBy), "handed back adoptable by rukpak")
		Expect(metav1.IsControlledBy(cm, bd)).To(BeTrue(), "the BundleDeployment owns its objects again, as under rukpak")
		notes, err := bdtest.EventNotes(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(notes).To(ContainElement(ContainSubstring("stop the deploy in flight")))

		By("deleting it: nothing holds it, and the garbage collector removes its objects")
		at := deleteWith(ctx, name, metav1.DeletePropagationBackground)
		Eventually(bdGone(ctx, name)).WithTimeout(10 * time.Second).Should(BeTrue())
		GinkgoWriter.Printf("delete after the release: gone %v after the delete\n", time.Since(at).Round(100*time.Millisecond))
		Eventually(installedUIDs(ctx, name)).WithTimeout(30 * time.Second).Should(Equal([2]types.UID{}))
	})
})
