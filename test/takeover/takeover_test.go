package takeover_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var widgetGVK = schema.GroupVersionKind{Group: "takeover.rukpak-kapp.test", Version: "v1", Kind: "Widget"}

// taken describes one BundleDeployment rukpak installed, as it was before
// the take-over.
type taken struct {
	name    string
	objects []*unstructured.Unstructured
	before  map[takeover.Ref]state
	plan    *takeover.Plan
}

// One ordered container: the contexts share rukpak and the adapter, which
// each reconfigures, so they must not be shuffled.
var _ = Describe("moving between rukpak and rukpak-kapp", Ordered, ContinueOnFailure, func() {
	// First: rukpak v0.16.0's API can only be installed while no v1alpha2
	// BundleDeployment exists.
	Context("taking over a running rukpak v0.16.0 (v1alpha1)", Ordered, takeOverV016)
	Context("the take-over and hand-back decisions, applied by the test in the reconciler's place", Ordered, byHand)
	Context("taking over a running rukpak", Ordered, takeOverAll)
	Context("one BundleDeployment at a time, rukpak and rukpak-kapp both running", Ordered, oneAtATime)
})

func takeOverAll() {
	bds := []*taken{{name: "to-plain"}, {name: "to-helm"}, {name: "to-registry"}}
	var widget *unstructured.Unstructured

	BeforeAll(func(ctx context.Context) {
		newBD(ctx, "to-plain", rukpakv1alpha2.ClassPlain, image(images["plain"]), "")
		newBD(ctx, "to-helm", rukpakv1alpha2.ClassHelm, image(images["helm"]), `{"values":"replicaCount: 2\ngreeting: taken over\n"}`)
		// rukpak v0.24.0 installs registry+v1 in AllNamespaces mode only.
		newBD(ctx, "to-registry", rukpakv1alpha2.ClassRegistry, image(images["registry"]), "")
		for _, t := range bds {
			Eventually(getBD(ctx, t.name)).WithTimeout(3*time.Minute).Should(installedByRukpak(), "rukpak did not install %s", t.name)
		}

		// A user's custom resource, created after the install.
		widget = &unstructured.Unstructured{}
		widget.SetGroupVersionKind(widgetGVK)
		widget.SetNamespace("to-plain")
		widget.SetName("my-widget")
		widget.Object["spec"] = map[string]any{"size": int64(3)}
		Expect(env.Client.Create(ctx, widget)).To(Succeed())

		for _, t := range bds {
			t.objects = installedObjects(ctx, mustBD(ctx, t.name))
			t.before = snapshot(ctx, t.objects)
			Expect(t.before).To(HaveLen(len(t.objects)), "%s: rukpak's release lists objects that are not there", t.name)
		}
	}, NodeTimeout(6*time.Minute))

	It("migrate plan shows per object what the take-over changes, and nothing blocks", func(ctx context.Context) {
		reports, code := migratePlan(ctx)
		for _, t := range bds {
			r := reports[t.name]
			Expect(r.Plan).NotTo(BeNil(), "%s: %s", t.name, r.Skipped)
			Expect(r.Plan.Blockers).To(BeEmpty(), t.name)
			t.plan = r.Plan
			var refs []takeover.Ref
			for _, o := range r.Plan.Objects {
				refs = append(refs, o.Ref)
				u, err := live(ctx, o.Ref)
				Expect(err).NotTo(HaveOccurred())
				if u.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" {
					// A chart's crds/ CRD: Helm installed it bare, and it stays
					// so, never owned by an App.
					Expect(o.Ref.Kind).To(Equal("CustomResourceDefinition"), "%s %s", t.name, o.Ref)
					Expect(o.Action).To(Equal("keep"), "%s %s", t.name, o.Ref)
					continue
				}
				Expect(o.Action).To(Equal("adopt"), "%s %s", t.name, o.Ref)
				Expect(o.Labels.Removed).To(HaveKey("app.kubernetes.io/managed-by"), "%s %s", t.name, o.Ref)
				Expect(o.Annotations.Removed).To(HaveKey("meta.helm.sh/release-name"), "%s %s", t.name, o.Ref)
				Expect(o.OwnerReferences.Removed).To(HaveLen(1), "%s %s", t.name, o.Ref)
			}
			Expect(len(refs)).To(Equal(len(t.objects)), "%s: the plan covers every installed object", t.name)
		}
		Expect(code).To(Equal(0))
	})

	It("makes every BundleDeployment Installed through its App within 60 s of switching", func(ctx context.Context) {
		By("stopping rukpak")
		rukpak.Stop()
		By("starting the adapter")
		runAdapter(ctx, strings.Join([]string{rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry}, ","))
		deadline := time.Now().Add(60 * time.Second)
		for _, t := range bds {
			By("waiting for " + t.name)
			Eventually(installedThroughApp(ctx, t.name)).WithContext(ctx).WithTimeout(time.Until(deadline)).Should(Succeed(), "%s", t.name)
		}
	}, NodeTimeout(2*time.Minute))

	It("keeps every object's UID and creationTimestamp, and rolls no Deployment", func(ctx context.Context) {
		for _, t := range bds {
			Expect(snapshot(ctx, t.objects)).To(Equal(t.before), "%s: an object was recreated, or a Deployment got a new ReplicaSet", t.name)
		}
	})

	It("leaves the custom resource as it was", func(ctx context.Context) {
		now := &unstructured.Unstructured{}
		now.SetGroupVersionKind(widgetGVK)
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(widget), now)).To(Succeed())
		Expect(now.GetUID()).To(Equal(widget.GetUID()))
		Expect(now.GetResourceVersion()).To(Equal(widget.GetResourceVersion()))
		Expect(now.Object["spec"]).To(Equal(widget.Object["spec"]))
	})

	It("did what migrate plan said on each object", func(ctx context.Context) {
		for _, t := range bds {
			Expect(t.plan).NotTo(BeNil(), "no plan for %s", t.name)
			planCameTrue(ctx, t.plan)
		}
	})

	It("cleans up rukpak's release Secrets and finalizers", func(ctx context.Context) {
		for _, t := range bds {
			bd := mustBD(ctx, t.name)
			Expect(releaseSecrets(ctx, bd)).To(BeEmpty(), t.name)
			for _, f := range takeover.RukpakFinalizers {
				Expect(bd.Finalizers).NotTo(ContainElement(f), t.name)
			}
		}
	})

	It("removes everything a taken-over BundleDeployment installed when it is deleted, but a chart's crds/", func(ctx context.Context) {
		defer func() {
			now := &unstructured.Unstructured{}
			now.SetGroupVersionKind(widgetGVK)
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(widget), now)
			Expect(apierrors.IsNotFound(err) || strings.Contains(errString(err), "no matches for kind")).To(BeTrue(), "the custom resource outlived its CRD: %v", err)
		}()
		for _, t := range bds {
			deleteAndWait(ctx, t.name)
			kept := map[takeover.Ref]bool{}
			for _, o := range t.plan.Objects {
				kept[o.Ref] = o.Action == "keep"
			}
			for ref := range t.before {
				if kept[ref] {
					// A chart's crds/ outlive the BundleDeployment, as under Helm.
					_, err := live(ctx, ref)
					Expect(err).NotTo(HaveOccurred(), "%s: the chart's CRD %s went with the BundleDeployment", t.name, ref)
					continue
				}
				Eventually(func() bool {
					_, err := live(ctx, ref)
					return apierrors.IsNotFound(err) || strings.Contains(errString(err), "no matches for kind")
				}).WithContext(ctx).Should(BeTrue(), "%s: %s is still there", t.name, ref)
			}
		}
	}, NodeTimeout(4*time.Minute))
}

func oneAtATime() {
	var objects []*unstructured.Unstructured
	var before, keptBefore map[takeover.Ref]state

	BeforeAll(func(ctx context.Context) {
		// rukpak claims the built-in classes; the adapter only the aliases.
		runAdapter(ctx, aliasClasses)
		Expect(rukpak.Start(ctx)).To(Succeed())

		newBD(ctx, "moves", rukpakv1alpha2.ClassPlain, image(images["plain"]), "")
		newBD(ctx, "stays", rukpakv1alpha2.ClassHelm, image(images["helm"]), `{"values":"greeting: stays with rukpak\n"}`)
		for _, name := range []string{"moves", "stays"} {
			Eventually(getBD(ctx, name)).WithTimeout(3*time.Minute).Should(installedByRukpak(), "rukpak did not install %s", name)
		}
		objects = installedObjects(ctx, mustBD(ctx, "moves"))
		before = snapshot(ctx, objects)
		keptBefore = snapshot(ctx, installedObjects(ctx, mustBD(ctx, "stays")))
	}, NodeTimeout(6*time.Minute))

	AfterAll(func(ctx context.Context) {
		deleteAndWait(ctx, "moves")
		deleteAndWait(ctx, "stays")
	}, NodeTimeout(3*time.Minute))

	It("migrate plan names what blocks and exits 1", func(ctx context.Context) {
		newBD(ctx, "never", rukpakv1alpha2.ClassPlain, image(strings.Replace(images["plain"], ":v1", ":missing", 1)), "")
		DeferCleanup(deleteAndWait, "never")
		reports, code := migratePlan(ctx, "--classes", aliasPlain+"="+rukpakv1alpha2.ClassPlain)
		Expect(code).To(Equal(1))
		Expect(reports["never"].Plan).NotTo(BeNil())
		Expect(reports["never"].Plan.Blockers).To(ConsistOf(HaveField("Reason", takeover.BlockNoRelease)))
		Expect(reports["moves"].Plan).NotTo(BeNil())
		Expect(reports["moves"].Plan.Blockers).To(BeEmpty())
	})

	It("hands a BundleDeployment over in place when its class is changed to an alias rukpak-kapp claims", func(ctx context.Context) {
		setClass(ctx, "moves", aliasPlain)
		Eventually(installedThroughApp(ctx, "moves")).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		Expect(snapshot(ctx, objects)).To(Equal(before), "an object was recreated, or the Deployment got a new ReplicaSet")
		Expect(releaseSecrets(ctx, mustBD(ctx, "moves"))).To(BeEmpty())
		// rukpak, still running, reconciles the BundleDeployment whatever its
		// class when an object it owns changes (its watches map an object to
		// its owner), so a reconcile of its that read the release before the
		// adapter deleted it may upgrade over kapp's apply and put its owner
		// references back. That is drift like any other: repaired within 5 s.
		Eventually(withoutRukpakOwner(ctx, objects)).WithTimeout(5 * time.Second).Should(Succeed())
		Expect(snapshot(ctx, objects)).To(Equal(before), "an object was recreated, or the Deployment got a new ReplicaSet")

		// A write to a kind without a generation (a ConfigMap) is drift
		// whatever it changes, and its repair re-applies everything: only
		// the kinds with one show that an owner reference alone is repaired.
		By("putting rukpak's owner reference back on the CRD and the Deployment, as rukpak's upgrade does (metadata only): drift repair removes it within 5 s")
		bd := mustBD(ctx, "moves")
		for _, ref := range refsOf(objects) {
			u, err := live(ctx, ref)
			Expect(err).NotTo(HaveOccurred())
			if u.GetGeneration() == 0 {
				continue
			}
			patch := client.MergeFrom(u.DeepCopy())
			u.SetOwnerReferences(append(u.GetOwnerReferences(), metav1.OwnerReference{APIVersion: rukpakv1alpha2.GroupVersion.String(),
				Kind: rukpakv1alpha2.OwnerKind, Name: bd.Name, UID: bd.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}))
			Expect(env.Client.Patch(ctx, u, patch, client.FieldOwner("rukpak-by-test"))).To(Succeed(), "%s", ref)
		}
		Eventually(withoutRukpakOwner(ctx, objects)).WithTimeout(5 * time.Second).Should(Succeed())
		Expect(snapshot(ctx, objects)).To(Equal(before), "an object was recreated, or the Deployment got a new ReplicaSet")
	}, NodeTimeout(2*time.Minute))

	It("leaves the BundleDeployments rukpak keeps alone", func(ctx context.Context) {
		// Not asserted: that rukpak keeps saying Installed. rukpak v0.24.0's
		// plain provisioner reconciles this helm BundleDeployment too, through
		// its watch on the Deployments any plain bundle installed (it maps a
		// Deployment to its owner without looking at the class), and then
		// reports the chart as a plain bundle without manifests/: seen here
		// with rukpak-kapp not touching it.
		Consistently(getBD(ctx, "stays")).WithTimeout(5 * time.Second).Should(
			HaveField("Finalizers", Not(ContainElement("core.rukpak.io/uninstall"))))
		stays := mustBD(ctx, "stays")
		Expect(releaseSecrets(ctx, stays)).NotTo(BeEmpty())
		Expect(snapshot(ctx, installedObjects(ctx, stays))).To(Equal(keptBefore))
		_, err := getApp(ctx, "stays")
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "an App was made for a BundleDeployment of rukpak's class: %v", err)
	})

	It("hands it back without deleting anything when the class is changed back, and rukpak adopts it", func(ctx context.Context) {
		setClass(ctx, "moves", rukpakv1alpha2.ClassPlain)
		Eventually(func() error { _, err := getApp(ctx, "moves"); return err }).WithTimeout(90*time.Second).Should(Satisfy(apierrors.IsNotFound), "rukpak-kapp did not let go of its App")
		Eventually(getBD(ctx, "moves")).WithTimeout(2*time.Minute).Should(installedByRukpak(), "rukpak did not adopt what rukpak-kapp installed")
		// The adapter lets go of its finalizer once it sees its App gone; rukpak
		// adopts the BundleDeployment meanwhile, on its own clock, and its
		// writes can make the adapter's patch look again with backoff.
		Eventually(getBD(ctx, "moves")).Should(HaveField("Finalizers", Not(ContainElement("core.rukpak.io/uninstall"))), "rukpak-kapp kept its finalizer")
		bd := mustBD(ctx, "moves")
		Expect(releaseSecrets(ctx, bd)).NotTo(BeEmpty())
		Expect(snapshot(ctx, objects)).To(Equal(before), "an object was recreated, or the Deployment got a new ReplicaSet")
		for _, ref := range refsOf(objects) {
			u, err := live(ctx, ref)
			Expect(err).NotTo(HaveOccurred())
			Expect(u.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"), "%s", ref)
			Expect(ownedByBundleDeployment(u)).To(BeTrue(), "%s", ref)
			// kapp's own labels stay (Helm's adoption never removes a field)
			// and are inert: kapp's record of the App stays in the system
			// namespace, so a later take-over adopts the objects again.
		}
	}, NodeTimeout(4*time.Minute))
}

// aliasClasses is the --classes list of an adapter alongside rukpak.
var aliasClasses = strings.Join([]string{
	aliasPlain + "=" + rukpakv1alpha2.ClassPlain, aliasHelm + "=" + rukpakv1alpha2.ClassHelm, aliasRegistry + "=" + rukpakv1alpha2.ClassRegistry,
}, ",")

// runAdapter (re)starts the adapter claiming classes.
func runAdapter(ctx context.Context, classes string) {
	if env.Adapter == nil {
		ExpectWithOffset(1, env.StartAdapter(ctx, "--classes", classes)).To(Succeed())
		return
	}
	env.Adapter.Stop()
	env.Adapter.SetArgs("--classes", classes)
	ExpectWithOffset(1, env.Adapter.Start(ctx)).To(Succeed())
}

func refsOf(objs []*unstructured.Unstructured) []takeover.Ref {
	var out []takeover.Ref
	for _, o := range objs {
		out = append(out, takeover.RefOf(o))
	}
	slices.SortFunc(out, func(a, b takeover.Ref) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// withoutRukpakOwner fails while an object still has rukpak's owner
// reference, with which rukpak keeps reconciling its BundleDeployment.
func withoutRukpakOwner(ctx context.Context, objects []*unstructured.Unstructured) func() error {
	return func() error {
		for _, ref := range refsOf(objects) {
			u, err := live(ctx, ref)
			if err != nil {
				return err
			}
			if ownedByBundleDeployment(u) {
				return fmt.Errorf("%s still has rukpak's owner reference, so rukpak keeps reconciling it", ref)
			}
		}
		return nil
	}
}

func ownedByBundleDeployment(u *unstructured.Unstructured) bool {
	for _, r := range u.GetOwnerReferences() {
		if r.Kind == rukpakv1alpha2.OwnerKind && r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func getApp(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(schema.GroupVersionKind{Group: "kappctrl.k14s.io", Version: "v1alpha1", Kind: "App"})
	return app, env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)
}
