package e2e_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// seenObject is one version of an object delivered by a watch, and when.
type seenObject struct {
	at  time.Time
	obj client.Object
}

// record collects every version a watch on list delivers until the spec ends.
func record(ctx context.Context, list client.ObjectList, opts ...client.ListOption) func() []seenObject {
	wc, err := client.NewWithWatch(env.ControlPlane.Config, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, list, opts...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	var mu sync.Mutex
	var seen []seenObject
	go func() {
		for ev := range w.ResultChan() {
			if o, ok := ev.Object.(client.Object); ok && ev.Type != watch.Error {
				mu.Lock()
				seen = append(seen, seenObject{time.Now(), o})
				mu.Unlock()
			}
		}
	}()
	return func() []seenObject {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenObject(nil), seen...)
	}
}

// appDeployed is the resourceVersion at which the App made from generation
// gen of its BundleDeployment first reported its spec deployed. Versions of
// one etcd are ordered, so this orders the App's report and the
// BundleDeployment's status without trusting when watch events arrived.
func appDeployed(apps []seenObject, gen int64) (int64, bool) {
	for _, s := range apps {
		app := s.obj.(*kappctrlv1alpha1.App)
		if app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] == strconv.FormatInt(gen, 10) &&
			app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
			app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded {
			return resourceVersion(app), true
		}
	}
	return 0, false
}

func resourceVersion(o client.Object) int64 {
	rv, err := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	Expect(err).NotTo(HaveOccurred())
	return rv
}

func labelNode(ctx context.Context, key, value string) {
	node := &corev1.Node{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Name: harness.FakeNodeName}, node)).To(Succeed())
	before := node.DeepCopy()
	if value == "" {
		delete(node.Labels, key)
	} else {
		node.Labels[key] = value
	}
	Expect(env.Client.Patch(ctx, node, client.MergeFrom(before))).To(Succeed())
}

var _ = Describe("the generation a condition describes", func() {
	It("never shows an upgrade installed before kapp-controller deployed it, and reports its first failure at once", func(ctx context.Context) {
		const name = "generation"
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: generation\n  namespace: default\ndata:\n  a: b\n"
		// A Deployment that schedules only where the test says so.
		deployment := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: generation, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: generation}}
  template:
    metadata: {labels: {app: generation}}
    spec:
      nodeSelector: {rukpak-kapp.test/generation: "go"}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers: [{name: c, image: %s}]
`, "registry.example/none:v1")
		unknownKind := "apiVersion: example.com/v1\nkind: Wibble\nmetadata:\n  name: generation\n"
		v1 := dirBundle(name+"-1", map[string]string{"manifests/cm.yaml": cm})
		v2 := dirBundle(name+"-2", map[string]string{"manifests/cm.yaml": cm, "manifests/deploy.yaml": deployment})
		v3 := dirBundle(name+"-3", map[string]string{"manifests/cm.yaml": cm, "manifests/w.yaml": unknownKind})
		DeferCleanup(labelNode, "rukpak-kapp.test/generation", "")

		bds := record(ctx, &rukpakv1alpha2.BundleDeploymentList{}, client.MatchingFields{"metadata.name": name})
		apps := record(ctx, &kappctrlv1alpha1.AppList{}, client.InNamespace(harness.SystemNamespace), client.MatchingFields{"metadata.name": name})
		plainBD(ctx, name, v1)
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		By("an upgrade whose Deployment cannot be scheduled: kapp waits, the BundleDeployment keeps saying generation 1 is installed")
		setRef(ctx, name, v2)
		Eventually(func() string {
			app, _ := getApp(ctx, name)
			if app == nil || len(app.Status.Conditions) == 0 || app.Status.ObservedGeneration != app.Generation {
				return ""
			}
			return app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] + "/" + string(app.Status.Conditions[0].Type)
		}).Should(Equal("2/Reconciling"))
		Consistently(getBD(ctx, name)).WithTimeout(15 * time.Second).Should(SatisfyAll(
			WithTransform(installedGeneration, Equal("True@1")),
			HaveField("Status.ObservedGeneration", BeEquivalentTo(1)),
			HaveField("Status.ResolvedSource.Image.Ref", ContainSubstring("@sha256:")),
		))

		By("the node gets the label: the Deployment becomes available and generation 2 is installed")
		labelNode(ctx, "rukpak-kapp.test/generation", "go")
		Eventually(getBD(ctx, name)).WithTimeout(2 * time.Minute).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		By("an upgrade kapp cannot apply: UpgradeFailed within 5 s of kapp-controller's failure")
		setRef(ctx, name, v3)
		Eventually(getBD(ctx, name)).WithTimeout(2 * time.Minute).Should(haveCondition("Installed", "False", "UpgradeFailed", "Wibble"))
		var appFailed, bdFailed time.Time
		for _, s := range apps() {
			app := s.obj.(*kappctrlv1alpha1.App)
			if appFailed.IsZero() && app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] == "3" && app.Status.ObservedGeneration == app.Generation &&
				len(app.Status.Conditions) > 0 && app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileFailed {
				appFailed = s.at
			}
		}
		for _, s := range bds() {
			bd := s.obj.(*rukpakv1alpha2.BundleDeployment)
			if c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled); bdFailed.IsZero() && c != nil &&
				c.Reason == rukpakv1alpha2.ReasonUpgradeFailed && c.ObservedGeneration == 3 {
				bdFailed = s.at
			}
		}
		Expect(appFailed.IsZero() || bdFailed.IsZero()).To(BeFalse(), "both failures were seen")
		GinkgoWriter.Printf("UpgradeFailed seen %v after the App's ReconcileFailed\n", bdFailed.Sub(appFailed))
		Expect(bdFailed.Sub(appFailed)).To(BeNumerically("<=", 5*time.Second))

		By("every version a watching client saw")
		for _, s := range bds() {
			bd := s.obj.(*rukpakv1alpha2.BundleDeployment)
			c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
			if c == nil || c.Status != metav1.ConditionTrue {
				continue
			}
			deployed, ok := appDeployed(apps(), c.ObservedGeneration)
			Expect(ok).To(BeTrue(), "Installed=True at generation %d, which the App never reported deployed", c.ObservedGeneration)
			Expect(resourceVersion(bd)).To(BeNumerically(">", deployed),
				"Installed=True at generation %d written before the App reported it deployed", c.ObservedGeneration)
		}
	})
})

// installedGeneration is the Installed condition as "Status@generation".
func installedGeneration(bd *rukpakv1alpha2.BundleDeployment) string {
	c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%s@%d", c.Status, c.ObservedGeneration)
}

// setRef points a BundleDeployment at another image.
func setRef(ctx context.Context, name, ref string) {
	bd := mustBD(ctx, name)
	before := bd.DeepCopy()
	bd.Spec.Source.Image.Ref = ref
	Expect(env.Client.Patch(ctx, bd, client.MergeFrom(before))).To(Succeed())
}
