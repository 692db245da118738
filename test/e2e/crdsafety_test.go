package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// settingsYAML is a ConfigMap of the bundle whose data says which release
// applied it: an object of the refused generation that must not change.
func settingsYAML(name, release string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: default\ndata:\n  release: %q\n", name, release)
}

// immutableConfigMap holds files for a configMaps source, in the system
// namespace, deleted when the spec ends.
func immutableConfigMap(ctx context.Context, name string, files map[string]string) {
	yes := true
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.SystemNamespace}, Data: files, Immutable: &yes}
	Expect(env.Client.Create(ctx, cm)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, cm) })
}

// useConfigMap points a configMaps BundleDeployment at another ConfigMap:
// a new generation, as the user did.
func useConfigMap(ctx context.Context, bd, cm string) {
	patch := fmt.Sprintf(`{"spec":{"source":{"configMaps":[{"configMap":{"name":%q},"path":"manifests"}]}}}`, cm)
	Expect(env.Client.Patch(ctx, &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: bd}},
		client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func configMapData(ctx context.Context, name string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	err := env.Client.Get(ctx, objKey("default", name), cm)
	return cm.Data, err
}

// specFields are the fields a CRD's v1 spec schema declares.
func specFields(ctx context.Context, name string) []string {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
	var out []string
	for f := range crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties {
		out = append(out, f)
	}
	return out
}

// unsafe is the upgrade of the Gizmo CRD: color dropped, size made
// required.
func unsafe() bdtest.GizmoSpec { return bdtest.GizmoV1().Without("color").Requiring("size") }

func toYAML(o any) string {
	out, err := yaml.Marshal(o)
	Expect(err).NotTo(HaveOccurred())
	return string(out)
}

// kickApp has kapp-controller deploy an App at once, as `kctrl app kick`
// does: a change of its spec (spec.paused: false added, or removed).
func kickApp(ctx context.Context, name string) {
	app, err := getApp(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	for _, value := range []string{"false", "null"} {
		before := app.Generation
		Expect(env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":`+value+`}}`)))).To(Succeed())
		if app.Generation != before {
			return
		}
	}
	Fail("the App's generation did not change")
}

var _ = Describe("CRD upgrade safety", func() {
	It("refuses the issue's unsafe plain upgrade within seconds, applying nothing of it, and installs the fixed bundle", func(ctx context.Context) {
		const bd, group = "crd-unsafe-plain", "plain.safety.example.com"
		crd := "gizmos." + group
		immutableConfigMap(ctx, bd+"-v1", map[string]string{
			"crd.yaml": bdtest.GizmoCRDYAML(group, bdtest.GizmoV1(), nil), "settings.yaml": settingsYAML(bd, "1"),
			"old.yaml": settingsYAML(bd+"-old", "1"),
		})
		immutableConfigMap(ctx, bd+"-v2", map[string]string{
			"crd.yaml": bdtest.GizmoCRDYAML(group, unsafe(), nil), "settings.yaml": settingsYAML(bd, "2"),
			"new.yaml": settingsYAML(bd+"-new", "2"),
		})
		configMapsBD(ctx, bd, bd+"-v1")
		Eventually(getBD(ctx, bd)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		installed := mustBD(ctx, bd).Status.ResolvedSource
		bdtest.CreateGizmo(ctx, group, "default", "precious", map[string]any{"color": "blue"})

		By("changing the BundleDeployment to the unsafe bundle")
		useConfigMap(ctx, bd, bd+"-v2")
		start := time.Now()
		Eventually(getBD(ctx, bd)).WithTimeout(10 * time.Second).Should(And(
			haveCondition("Installed", "False", "UpgradeFailed", `The CRD upgrade safety check refused kapp's update of a CRD`),
			haveCondition("Installed", "False", "UpgradeFailed", `for CRD "`+crd+`"`),
			haveCondition("Installed", "False", "UpgradeFailed", `version "v1", field "^.spec.color": field removed (NoExistingFieldRemoved)`),
			haveCondition("Installed", "False", "UpgradeFailed", `field "^.spec": new required fields [size] (RequiredField)`),
			haveCondition("Installed", "False", "UpgradeFailed", `existing custom object default/precious failed validation against version "v1": spec.color: not in the new schema, so dropped; spec.size: Required value`),
			haveCondition("Installed", "False", "UpgradeFailed", `set the "core.rukpak.io/safe-crd-upgrade-validation" annotation to "false", or spec.preflight.crdUpgradeSafety.disabled to true on BundleDeployment "`+bd+`"`),
			HaveField("Status.ResolvedSource", Equal(installed)),
		))
		fmt.Fprintf(GinkgoWriter, "refusal reported %.1f s after the spec change\n", time.Since(start).Seconds())
		Eventually(func() ([]string, error) { return bdtest.EventNotes(ctx, bd) }).WithContext(ctx).Should(ContainElement(ContainSubstring("NoExistingFieldRemoved")))

		By("nothing of the refused generation reached the cluster, through kapp-controller's retries")
		Consistently(func(g Gomega) {
			g.Expect(specFields(ctx, crd)).To(ConsistOf("size", "color"))
			spec, err := bdtest.GizmoSpecOf(ctx, group, "default", "precious")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(spec).To(Equal(map[string]any{"color": "blue"}))
			g.Expect(configMapData(ctx, bd)).To(HaveKeyWithValue("release", "1"))
			g.Expect(configMapData(ctx, bd+"-old")).To(HaveKeyWithValue("release", "1"), "not pruned")
			_, err = configMapData(ctx, bd+"-new")
			g.Expect(err).To(MatchError(ContainSubstring("not found")), "not created")
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())

		By("fixing the bundle installs it without any other action")
		immutableConfigMap(ctx, bd+"-v3", map[string]string{
			"crd.yaml": bdtest.GizmoCRDYAML(group, bdtest.GizmoV1().With("shape", "string"), nil), "settings.yaml": settingsYAML(bd, "3"),
		})
		useConfigMap(ctx, bd, bd+"-v3")
		Eventually(getBD(ctx, bd)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(specFields(ctx, crd)).To(ConsistOf("size", "color", "shape"))
		Expect(bdtest.GizmoSpecOf(ctx, group, "default", "precious")).To(Equal(map[string]any{"color": "blue"}))
		Expect(configMapData(ctx, bd)).To(HaveKeyWithValue("release", "3"))
	})

	It("refuses the same upgrade of a helm chart's CRD and of a registry+v1 bundle's", func(ctx context.Context) {
		const helm, group = "crd-unsafe-helm", "helm.safety.example.com"
		chart := func(version string, spec bdtest.GizmoSpec) string {
			dir := GinkgoT().TempDir()
			files := map[string]string{
				"Chart.yaml":          "apiVersion: v2\nname: gizmos\nversion: " + version + "\n",
				"templates/crd.yaml":  bdtest.GizmoCRDYAML(group, spec, nil),
				"templates/conf.yaml": settingsYAML("{{ .Release.Name }}", version),
			}
			for p, data := range files {
				Expect(os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)).To(Succeed())
				Expect(os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644)).To(Succeed())
			}
			ref, _, err := env.Registry.PushDir(dir, "charts/gizmos:"+version)
			Expect(err).NotTo(HaveOccurred())
			return ref
		}
		v1, v2 := chart("1.0.0", bdtest.GizmoV1()), chart("2.0.0", unsafe())
		helmBD(ctx, helm, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: v1}})
		Eventually(getBD(ctx, helm)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		bdtest.CreateGizmo(ctx, group, "default", "precious", map[string]any{"color": "blue"})
		setRef(ctx, helm, v2)
		Eventually(getBD(ctx, helm)).WithTimeout(10 * time.Second).Should(
			haveCondition("Installed", "False", "UpgradeFailed", `existing custom object default/precious failed validation`))
		Expect(configMapData(ctx, helm)).To(HaveKeyWithValue("release", "1.0.0"))
		Expect(bdtest.GizmoSpecOf(ctx, group, "default", "precious")).To(Equal(map[string]any{"color": "blue"}))

		By("a registry+v1 bundle whose CRD loses a field an object uses")
		const reg, ns = "crd-unsafe-registry", "crd-unsafe-registry"
		const crdFile = "manifests/podmonitors.monitoring.coreos.com.crd.yaml"
		original, err := os.ReadFile(bdtest.Testdata("rukpak-bundles", "registry", "valid", crdFile))
		Expect(err).NotTo(HaveOccurred())
		narrowed := bdtest.CRD(string(original))
		spec := narrowed.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		delete(spec.Properties, "jobLabel")
		narrowed.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		refV1 := bdtest.BundleWith("bundles/registry-crd-safety:v1", nil, "rukpak-bundles", "registry", "valid")
		refV2 := bdtest.BundleWith("bundles/registry-crd-safety:v2", map[string]string{crdFile: toYAML(narrowed)}, "rukpak-bundles", "registry", "valid")
		registryBD(ctx, reg, refV1, ns)
		Eventually(getBD(ctx, reg)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		monitor := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
			"metadata": map[string]any{"namespace": "default", "name": "precious"},
			"spec":     map[string]any{"jobLabel": "app", "podMetricsEndpoints": []any{}, "selector": map[string]any{}},
		}}
		Expect(env.Client.Create(ctx, monitor)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, monitor) })
		setRef(ctx, reg, refV2)
		// kapp takes long over a registry+v1 bundle's many kinds, longer the
		// busier the machine (kapp-controller's time, not the adapter's):
		// its refused run for generation 2 is awaited, then the adapter has
		// seconds to say so. A run kapp-controller's sidecar lost (its
		// "waitid: no child processes" race, which it retries after a
		// backoff) is no verdict on the bundle: harness.Reconciled waits on.
		Eventually(func() string {
			app, _ := getApp(ctx, reg)
			if app == nil || app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] != "2" {
				return ""
			}
			done, err := harness.Reconciled(app.Generation, app.Status.GenericStatus)
			switch {
			case !done:
				return ""
			case err == nil:
				return "2/ReconcileSucceeded"
			}
			return "2/ReconcileFailed"
		}).WithTimeout(3 * time.Minute).Should(Equal("2/ReconcileFailed"))
		Eventually(getBD(ctx, reg)).WithTimeout(10 * time.Second).Should(And(
			haveCondition("Installed", "False", "UpgradeFailed", `field "^.spec.jobLabel": field removed (NoExistingFieldRemoved)`),
			haveCondition("Installed", "False", "UpgradeFailed", `existing custom object default/precious failed validation against version "v1": spec.jobLabel: not in the new schema`),
		))
	})

	// A CRD edited by hand is judged like any other update: a narrowing edit
	// is refused at once. A widening edit is allowed; drift repair then has
	// kapp put the bundle's CRD back, which removes the field the edit added,
	// and that is refused like any field removal: the BundleDeployment says
	// so (once kapp-controller's retry failed too, as for any failed
	// re-apply), and objects keep what they store in the field. The way out
	// is the opt-out annotation on the live CRD.
	It("judges hand edits of an installed CRD and the drift repair that follows", func(ctx context.Context) {
		const bd, group = "crd-drift", "drift.safety.example.com"
		crd := "gizmos." + group
		ref := dirBundle(bd, map[string]string{"manifests/crd.yaml": bdtest.GizmoCRDYAML(group, bdtest.GizmoV1(), nil)})
		plainBD(ctx, bd, ref)
		Eventually(getBD(ctx, bd)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		bdtest.CreateGizmo(ctx, group, "default", "precious", map[string]any{"color": "blue"})

		By("a narrowing hand edit is refused")
		live := &apiextensionsv1.CustomResourceDefinition{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: crd}, live)).To(Succeed())
		narrow := live.DeepCopy()
		delete(narrow.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties, "color")
		Expect(env.Client.Update(ctx, narrow)).To(MatchError(ContainSubstring(`field "^.spec.color": field removed`)))

		By("a widening hand edit is allowed, and an object uses the new field")
		wide := live.DeepCopy()
		spec := wide.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["shape"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		wide.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		Expect(env.Client.Update(ctx, wide)).To(Succeed())
		// The API server serves the new schema a moment after the update;
		// until then the field is pruned from the write.
		Eventually(func() (map[string]any, error) {
			if err := env.Client.Patch(ctx, bdtest.Gizmo(group, "default", "precious", nil),
				client.RawPatch(types.MergePatchType, []byte(`{"spec":{"shape":"round"}}`))); err != nil {
				return nil, err
			}
			return bdtest.GizmoSpecOf(ctx, group, "default", "precious")
		}).WithContext(ctx).Should(HaveKeyWithValue("shape", "round"))

		By("drift repair's re-apply of the bundle's CRD is refused, and said")
		Eventually(getBD(ctx, bd)).WithTimeout(30 * time.Second).Should(And(
			haveCondition("Installed", "False", "UpgradeFailed", `version "v1", field "^.spec.shape": field removed (NoExistingFieldRemoved)`),
			haveCondition("Installed", "False", "UpgradeFailed", `existing custom object default/precious failed validation against version "v1": spec.shape: not in the new schema`),
		))
		Expect(specFields(ctx, crd)).To(ConsistOf("size", "color", "shape"))
		Expect(bdtest.GizmoSpecOf(ctx, group, "default", "precious")).To(HaveKeyWithValue("shape", "round"))

		By("the way out: the CRD opts out (a metadata change, never judged), and the next re-apply restores the bundle's CRD")
		Expect(env.Client.Patch(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crd}},
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"core.rukpak.io/safe-crd-upgrade-validation":"false"}}}`)))).To(Succeed())
		// kapp-controller retries the failed App with backoff; a kick (as
		// `kctrl app kick`) is what a user would do instead of waiting.
		kickApp(ctx, bd)
		Eventually(getBD(ctx, bd)).WithTimeout(time.Minute).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(specFields(ctx, crd)).To(ConsistOf("size", "color"))
	})
})
