package takeover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// A cluster that runs rukpak v0.16.0 (rukpak's first API, its own CRDs, its
// objects stored as v1alpha1) is taken over in place by applying
// rukpak-kapp's manifests and starting the adapter, as docs/
// migrating-from-rukpak.md says. rukpak v0.16.0 unpacks images in Pods,
// which the fake nodes do not run: the bundles come from git and http.

func getV1alpha1(ctx context.Context, name string) func() (*rukpakv1alpha1.BundleDeployment, error) {
	return func() (*rukpakv1alpha1.BundleDeployment, error) {
		bd := &rukpakv1alpha1.BundleDeployment{}
		return bd, env.Client.Get(ctx, client.ObjectKey{Name: name}, bd)
	}
}

// v1alpha1Condition matches a v1alpha1 BundleDeployment's condition t: its
// status, reason and a message containing msg. current also asks for the
// condition's observedGeneration, which rukpak v0.16.0 never set.
func v1alpha1Condition(t string, status metav1.ConditionStatus, reason, msg string, current bool) types.GomegaMatcher {
	return WithTransform(func(bd *rukpakv1alpha1.BundleDeployment) string {
		c := meta.FindStatusCondition(bd.Status.Conditions, t)
		if c == nil {
			return "no " + t + " condition"
		}
		return fmt.Sprintf("%s/%s/gen-current=%v: %s", c.Status, c.Reason, !current || c.ObservedGeneration == bd.Generation, c.Message)
	}, And(HavePrefix(fmt.Sprintf("%s/%s/gen-current=true: ", status, reason)), ContainSubstring(msg)))
}

// bundlesOf lists a BundleDeployment's generated Bundles by rukpak's labels.
func bundlesOf(ctx context.Context, bd string) []rukpakv1alpha1.Bundle {
	list := &rukpakv1alpha1.BundleList{}
	ExpectWithOffset(1, env.Client.List(ctx, list, client.MatchingLabels{rukpakv1alpha1.LabelOwnerKind: rukpakv1alpha1.OwnerKindBundleDeployment,
		rukpakv1alpha1.LabelOwnerName: bd})).To(Succeed())
	return list.Items
}

// releaseObjects are the objects of a rukpak v0.16.0 release, placed as its
// Helm placed them: namespaced objects without a namespace in the system
// namespace, rukpak v0.16's release namespace.
func releaseObjects(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) []*unstructured.Unstructured {
	secrets := &corev1.SecretList{}
	ExpectWithOffset(1, env.Client.List(ctx, secrets, client.InNamespace(harness.SystemNamespace))).To(Succeed())
	rel, err := takeover.CurrentRelease(takeover.ReleaseSecrets(bd, secrets.Items))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, rel.Namespace).To(Equal(harness.SystemNamespace), "rukpak v0.16.0 keeps its releases in the system namespace")
	objs, err := takeover.ParseManifest([]byte(rel.Manifest))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	crds, err := takeover.ReleaseCRDs(rel)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	placed, err := takeover.Place(append(objs, crds...), harness.SystemNamespace, func(gk schema.GroupKind) (bool, bool) {
		m, err := env.Client.RESTMapper().RESTMapping(gk)
		if err != nil {
			return false, false
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, true
	})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return placed
}

// storedAs is the apiVersion etcd holds a BundleDeployment in.
func storedAs(ctx context.Context, name string) string {
	data, err := env.ControlPlane.EtcdGet(ctx, "/registry/core.rukpak.io/bundledeployments/"+name)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var obj struct {
		APIVersion string `json:"apiVersion"`
	}
	ExpectWithOffset(1, json.Unmarshal(data, &obj)).To(Succeed())
	return obj.APIVersion
}

func takeOverV016() {
	type v016 struct {
		name    string
		objects []*unstructured.Unstructured
		before  map[takeover.Ref]state
		bundle  rukpakv1alpha1.Bundle
		plan    *takeover.Plan
	}
	bds := []*v016{{name: "v016-plain"}, {name: "v016-helm"}, {name: "v016-registry"}}
	var old *harness.RukpakV016
	var widget *unstructured.Unstructured
	// onItsOwn is a Bundle a user made, no BundleDeployment's, as rukpak
	// v0.16.0 unpacked it.
	var onItsOwn rukpakv1alpha1.Bundle

	BeforeAll(func(ctx context.Context) {
		// rukpak v0.24.0 serves v1alpha2 only; it comes back at the end.
		rukpak.Stop()
		Expect(env.InstallRukpakV016API(ctx)).To(Succeed())
		var err error
		old, err = env.StartRukpakV016(ctx)
		Expect(err).NotTo(HaveOccurred())

		plain, err := env.Git.NewRepo("v016-plain", filepath.Join("testdata", "plain"), "bundle")
		Expect(err).NotTo(HaveOccurred())
		registry, err := env.Git.NewRepo("v016-registry", filepath.Join(env.Root, "test", "testdata", "rukpak-bundles", "registry", "valid"), "bundle")
		Expect(err).NotTo(HaveOccurred())
		chart, err := harness.TarGz(filepath.Join(env.Root, "examples", "charts"))
		Expect(err).NotTo(HaveOccurred())
		git := func(repo *harness.Repo) rukpakv1alpha1.BundleSource {
			return rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeGit,
				Git: &rukpakv1alpha1.GitSource{Repository: repo.URL, Directory: "./bundle", Ref: rukpakv1alpha1.GitRef{Branch: "main"}}}
		}
		for _, c := range []struct {
			name, class string
			src         rukpakv1alpha1.BundleSource
			config      string
		}{
			{"v016-plain", rukpakv1alpha1.ClassPlain, git(plain), ""},
			{"v016-helm", rukpakv1alpha1.ClassHelm, rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeHTTP,
				HTTP: &rukpakv1alpha1.HTTPSource{URL: env.Files.Put("/v016/hello-world-0.1.0.tgz", chart)}}, `{"values":"replicaCount: 2\ngreeting: taken over\n"}`},
			// registry+v1 as rukpak v0.16 wired it: the plain provisioner, a registry template.
			{"v016-registry", rukpakv1alpha1.ClassRegistry, git(registry), ""},
		} {
			bd := &rukpakv1alpha1.BundleDeployment{
				ObjectMeta: metav1.ObjectMeta{Name: c.name},
				Spec: rukpakv1alpha1.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha1.OwnClassFor(c.class), Template: rukpakv1alpha1.BundleTemplate{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": c.name}},
					Spec:       rukpakv1alpha1.BundleSpec{ProvisionerClassName: c.class, Source: c.src},
				}},
			}
			if c.config != "" {
				bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(c.config)}
			}
			Expect(env.Client.Create(ctx, bd)).To(Succeed())
		}
		onItsOwn = rukpakv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "v016-on-its-own"},
			Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Source: git(plain)}}
		Expect(env.Client.Create(ctx, &onItsOwn)).To(Succeed())
		for _, t := range bds {
			Eventually(getV1alpha1(ctx, t.name)).WithTimeout(3*time.Minute).Should(And(
				v1alpha1Condition("Installed", "True", "InstallationSucceeded", "Instantiated bundle", false),
				HaveField("Status.ActiveBundle", Not(BeEmpty())),
			), "rukpak v0.16.0 did not install %s", t.name)
		}

		// A user's custom resource, created after the install.
		widget = &unstructured.Unstructured{}
		widget.SetGroupVersionKind(widgetGVK)
		widget.SetNamespace(harness.SystemNamespace)
		widget.SetName("v016-widget")
		widget.Object["spec"] = map[string]any{"size": int64(5)}
		Expect(env.Client.Create(ctx, widget)).To(Succeed())

		for _, t := range bds {
			bd, err := getV1alpha1(ctx, t.name)()
			Expect(err).NotTo(HaveOccurred())
			t.objects = releaseObjects(ctx, rukpakv1alpha1.ToV1alpha2(bd))
			t.before = snapshot(ctx, t.objects)
			Expect(t.before).To(HaveLen(len(t.objects)), "%s: rukpak's release lists objects that are not there", t.name)
			generated := bundlesOf(ctx, t.name)
			Expect(generated).To(ConsistOf(HaveField("Name", bd.Status.ActiveBundle)))
			t.bundle = generated[0]
			Expect(t.bundle.Finalizers).To(ContainElement("core.rukpak.io/delete-cached-bundle"))
			Expect(storedAs(ctx, t.name)).To(Equal("core.rukpak.io/v1alpha1"))
		}
		Eventually(func() (rukpakv1alpha1.Bundle, error) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(&onItsOwn), &onItsOwn)
			return onItsOwn, err
		}).Should(And(HaveField("Status.Phase", rukpakv1alpha1.PhaseUnpacked), HaveField("Status.ContentURL", Not(BeEmpty())),
			HaveField("Finalizers", ContainElement("core.rukpak.io/delete-cached-bundle"))), "rukpak v0.16.0 did not unpack the Bundle on its own")
		// Namespaced objects without a namespace are in the system namespace.
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: "widget-server"}, &corev1.Service{})).To(Succeed())
	}, NodeTimeout(6*time.Minute))

	AfterAll(func(ctx context.Context) {
		for _, t := range bds {
			deleteAndWait(ctx, t.name)
		}
		Expect(client.IgnoreNotFound(env.Client.Delete(ctx, &onItsOwn))).To(Succeed())
		Eventually(func() error {
			return env.Client.Get(ctx, client.ObjectKeyFromObject(&onItsOwn), &rukpakv1alpha1.Bundle{})
		}).WithContext(ctx).
			Should(Satisfy(apierrors.IsNotFound), "a Bundle rukpak unpacked is not held by rukpak's finalizer once rukpak is gone")
		// The chart's crds/ CRD stays, as Helm keeps them (docs/crd-safety.md, "CRD
		// upgrade safety"); the contexts after this one install the chart
		// anew.
		chartCRD := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "greetings.hello.rukpak-kapp.test"}}
		Expect(client.IgnoreNotFound(env.Client.Delete(ctx, chartCRD))).To(Succeed())
		Eventually(func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(chartCRD), chartCRD) }).WithContext(ctx).
			Should(Satisfy(apierrors.IsNotFound))
		// The contexts after this one start from rukpak v0.24.0 running and
		// the adapter stopped.
		if env.Adapter != nil {
			env.Adapter.Stop()
		}
		Expect(rukpak.Start(ctx)).To(Succeed())
	}, NodeTimeout(4*time.Minute))

	It("migrate plan covers the v1alpha1 BundleDeployments, before rukpak-kapp's CRDs are applied, and nothing blocks", func(ctx context.Context) {
		reports, code := migratePlan(ctx)
		for _, t := range bds {
			r := reports[t.name]
			Expect(r.Plan).NotTo(BeNil(), "%s: %s", t.name, r.Skipped)
			Expect(r.Plan.Blockers).To(BeEmpty(), t.name)
			Expect(r.Plan.Objects).To(HaveLen(len(t.objects)), t.name)
			t.plan = r.Plan
		}
		Expect(code).To(Equal(0))
	})

	It("makes every BundleDeployment Installed through its App within 60 s of switching, with the Bundle rukpak made", func(ctx context.Context) {
		By("stopping rukpak v0.16.0 and applying rukpak-kapp's API")
		old.Stop()
		Expect(env.InstallAPI(ctx)).To(Succeed())
		for _, t := range bds {
			Expect(storedAs(ctx, t.name)).To(Equal("core.rukpak.io/v1alpha1"), "%s: as rukpak v0.16.0 wrote it", t.name)
		}
		// rukpak v0.24.0's BundleDeployments of the contexts after this one
		// must not get the adapter's finalizer.
		Expect(env.PointFinalizerPolicyAt(ctx, aliasPlain, aliasHelm, aliasRegistry)).To(Succeed())
		By("starting the adapter")
		runAdapter(ctx, strings.Join([]string{rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry}, ","))
		deadline := time.Now().Add(60 * time.Second)
		for _, t := range bds {
			By("waiting for " + t.name)
			Eventually(getV1alpha1(ctx, t.name)).WithContext(ctx).WithTimeout(time.Until(deadline)).Should(And(
				v1alpha1Condition("Installed", "True", "InstallationSucceeded", "Instantiated bundle "+t.bundle.Name+" successfully", true),
				v1alpha1Condition("HasValidBundle", "True", "UnpackSuccessful", "Successfully unpacked the "+t.bundle.Name+" Bundle", true),
				HaveField("Status.ActiveBundle", t.bundle.Name),
			), t.name)
			app, err := getApp(ctx, t.name)
			Expect(err).NotTo(HaveOccurred())
			Expect(app.GetAnnotations()).To(HaveKey(takeover.AnnotationTakenOver), "%s was taken over, not installed anew", t.name)
		}
	}, NodeTimeout(2*time.Minute))

	It("keeps every object's UID and creationTimestamp, rolls no Deployment and leaves the custom resource", func(ctx context.Context) {
		for _, t := range bds {
			Expect(snapshot(ctx, t.objects)).To(Equal(t.before), "%s: an object was recreated, or a Deployment got a new ReplicaSet", t.name)
			planCameTrue(ctx, t.plan)
		}
		now := &unstructured.Unstructured{}
		now.SetGroupVersionKind(widgetGVK)
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(widget), now)).To(Succeed())
		Expect(now.GetUID()).To(Equal(widget.GetUID()))
		Expect(now.GetResourceVersion()).To(Equal(widget.GetResourceVersion()))
	})

	It("keeps rukpak's Bundles, without rukpak's finalizer, and removes rukpak's release Secrets", func(ctx context.Context) {
		contentURL := func(ctx context.Context, bundle string) string {
			webhooks, err := env.AdapterWebhookAddress(ctx)
			Expect(err).NotTo(HaveOccurred())
			return "https://" + webhooks + "/bundles/" + bundle + ".tgz"
		}
		for _, t := range bds {
			Eventually(func() []rukpakv1alpha1.Bundle { return bundlesOf(ctx, t.name) }).Should(ConsistOf(And(
				HaveField("UID", t.bundle.UID),
				HaveField("Finalizers", BeEmpty()),
				HaveField("Status.Phase", rukpakv1alpha1.PhaseUnpacked),
				// rukpak's own contentURL gave way to the adapter's.
				HaveField("Status.ContentURL", contentURL(ctx, t.bundle.Name)),
			)), t.name)
			Expect(releaseSecrets(ctx, mustBD(ctx, t.name))).To(BeEmpty(), t.name)
		}

		By("a Bundle on its own: kept, unpacked again by the adapter from the commit rukpak pinned, served at the adapter's contentURL")
		Eventually(func() (rukpakv1alpha1.Bundle, error) {
			b := rukpakv1alpha1.Bundle{}
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(&onItsOwn), &b)
			return b, err
		}).Should(And(
			HaveField("UID", onItsOwn.UID),
			HaveField("Finalizers", BeEmpty()),
			HaveField("Status.Phase", rukpakv1alpha1.PhaseUnpacked),
			HaveField("Status.ResolvedSource", onItsOwn.Status.ResolvedSource),
			HaveField("Status.ContentURL", contentURL(ctx, onItsOwn.Name)),
		))
		c, err := env.ContentClient(ctx)
		Expect(err).NotTo(HaveOccurred())
		token, err := env.AccountToken(ctx, "default", "v016-reader", "bundle-reader")
		Expect(err).NotTo(HaveOccurred())
		code, entries, body, err := bdtest.Download(ctx, c, contentURL(ctx, onItsOwn.Name), token)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(entries).To(ContainElement(HavePrefix("manifests/")))
	})

	It("finishes the storage migration as docs/v1alpha1.md says, and moves BundleDeployments to v1alpha2 without moving anything", func(ctx context.Context) {
		By("rewriting every BundleDeployment once, unchanged, and recording that none is stored as v1alpha1")
		for _, t := range bds {
			Eventually(func() error {
				bd := mustBD(ctx, t.name)
				gen := bd.Generation
				if err := env.Client.Update(ctx, bd); err != nil {
					return err
				}
				if bd.Generation != gen {
					return fmt.Errorf("%s: the rewrite changed its generation to %d", t.name, bd.Generation)
				}
				return nil
			}).WithContext(ctx).Should(Succeed())
			Expect(storedAs(ctx, t.name)).To(Equal("core.rukpak.io/v1alpha2"))
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "bundledeployments.core.rukpak.io"}, crd)).To(Succeed())
		Expect(crd.Status.StoredVersions).To(ConsistOf("v1alpha1", "v1alpha2"))
		crd.Status.StoredVersions = []string{"v1alpha2"}
		Expect(env.Client.Status().Update(ctx, crd)).To(Succeed())

		By("writing two of them at v1alpha2 with the install namespace rukpak v0.16 installed into")
		for _, name := range []string{"v016-plain", "v016-helm"} {
			bd := mustBD(ctx, name)
			Expect(rukpakv1alpha1.IsV1alpha1(bd)).To(BeTrue())
			// docs/v1alpha1.md: where rukpak v0.16 put what it installed.
			Expect(harness.Edit(ctx, env.Client, bd, func(bd *rukpakv1alpha2.BundleDeployment) {
				bd.Spec.InstallNamespace = harness.SystemNamespace
			})).To(Succeed())
		}
		for _, t := range bds[:2] {
			Eventually(installedThroughApp(ctx, t.name)).WithContext(ctx).WithTimeout(60*time.Second).Should(Succeed(), t.name)
			// rukpak-kapp's own rendering replaces rukpak's at this change:
			// a plain bundle's objects are the same, a chart's rendering may
			// differ as migrate plan's "later" said; nothing is recreated.
			now := snapshot(ctx, t.objects)
			for ref, s := range t.before {
				Expect(now).To(HaveKeyWithValue(ref, HaveField("UID", s.UID)), "%s: %s was recreated", t.name, ref)
			}
			if len(t.plan.Later) == 0 {
				Expect(now).To(Equal(t.before), "%s: a Deployment rolled though migrate plan said nothing changes later", t.name)
			}
		}
	}, NodeTimeout(3*time.Minute))
}
