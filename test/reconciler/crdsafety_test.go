package reconciler_test

import (
	"context"
	"crypto/x509"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks/crdsafety"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// ownedBy are the labels kapp puts on what a BundleDeployment installed.
func ownedBy(bd string) map[string]string {
	return map[string]string{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName: bd}
}

// gizmoSetup creates a BundleDeployment (so the CRD has a live owner), the
// CRD as its first release has it, and a Gizmo with a color.
func gizmoSetup(ctx context.Context, bd, group string, labels map[string]string, mutate ...func(*rukpakv1alpha2.BundleDeployment)) {
	bdtest.PlainBD(ctx, bd, images["plain-v0/valid"], mutate...)
	doc := bdtest.GizmoCRDYAML(group, bdtest.GizmoV1(), labels)
	Expect(bdtest.ApplyCRD(ctx, doc)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, bdtest.CRD(doc)) })
	bdtest.CreateGizmo(ctx, group, "default", "precious", map[string]any{"color": "blue"})
}

// The API server calls the adapter's webhook in this process, through the
// Service of config/webhook routed to it (harness.AdapterWebhookAddress).
var _ = Describe("the CRD upgrade safety check", func() {
	It("behaves as rukpak's CRD validating webhook did for CRDs a BundleDeployment installed", func(ctx context.Context) {
		const bd, group = "crd-rukpak-webhook", "webhook.safety.example.com"
		gizmoSetup(ctx, bd, group, ownedBy(bd))

		By("a safe update (a new optional field) is allowed")
		Expect(bdtest.ApplyCRD(ctx, bdtest.GizmoCRDYAML(group, bdtest.GizmoV1().With("shape", "string"), ownedBy(bd)))).To(Succeed())

		By("an update that makes an existing custom resource invalid is denied, naming it")
		err := bdtest.ApplyCRD(ctx, bdtest.GizmoCRDYAML(group, bdtest.GizmoV1().With("shape", "string").Requiring("size"), ownedBy(bd)))
		Expect(err).To(MatchError(And(
			ContainSubstring(`admission webhook "crd-upgrade-safety.core.rukpak.io" denied the request: failed to validate safety of UPDATE for CRD "gizmos.`+group+`"`),
			ContainSubstring(`(NOTE: to disable this validation, set the "core.rukpak.io/safe-crd-upgrade-validation" annotation to "false", or spec.preflight.crdUpgradeSafety.disabled to true on BundleDeployment "`+bd+`")`),
			ContainSubstring(`error validating existing CRs against new CRD's schema for "gizmos.`+group+`": existing custom object default/precious failed validation against version "v1": spec.size: Required value`),
			ContainSubstring(`version "v1", field "^.spec": new required fields [size] (RequiredField)`),
		)))

		By("with the disable annotation it is allowed")
		withAnnotation := bdtest.CRD(bdtest.GizmoCRDYAML(group, bdtest.GizmoV1().With("shape", "string").With("weight", "integer"), ownedBy(bd)))
		withAnnotation.Annotations = map[string]string{crdsafety.AnnotationValidation: "false"}
		withAnnotation.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = requireSize(withAnnotation)
		Expect(updateCRD(ctx, withAnnotation)).To(Succeed())
	})

	// kube-apiserver 1.37 refuses this itself, before any validating
	// webhook is asked (the check's own NoStoredVersionRemoved, as in
	// rukpak's webhook, is in TestDecide).
	It("denies removing a stored version", func(ctx context.Context) {
		const bd, group = "crd-stored-version", "stored.safety.example.com"
		gizmoSetup(ctx, bd, group, ownedBy(bd))
		By("adding v2 as the stored version, v1 still served")
		crd := liveCRD(ctx, "gizmos."+group)
		v2 := *crd.Spec.Versions[0].DeepCopy()
		v2.Name = "v2"
		crd.Spec.Versions[0].Storage = false
		crd.Spec.Versions = append(crd.Spec.Versions, v2)
		Expect(updateCRD(ctx, crd)).To(Succeed())
		Eventually(func() []string { return liveCRD(ctx, "gizmos."+group).Status.StoredVersions }).WithContext(ctx).Should(ConsistOf("v1", "v2"))

		By("dropping v1, which status.storedVersions still lists")
		crd = liveCRD(ctx, "gizmos."+group)
		crd.Spec.Versions = crd.Spec.Versions[1:]
		Expect(updateCRD(ctx, crd)).To(MatchError(ContainSubstring(`status.storedVersions[0]: Invalid value: "v1": missing from spec.versions`)))
	})

	It("lets a BundleDeployment opt out with spec.preflight.crdUpgradeSafety.disabled", func(ctx context.Context) {
		const bd, group = "crd-opted-out", "optout.safety.example.com"
		gizmoSetup(ctx, bd, group, ownedBy(bd), func(b *rukpakv1alpha2.BundleDeployment) {
			b.Spec.Preflight = &rukpakv1alpha2.PreflightConfig{CRDUpgradeSafety: &rukpakv1alpha2.CRDUpgradeSafetyPreflightConfig{Disabled: true}}
		})
		Expect(bdtest.ApplyCRD(ctx, bdtest.GizmoCRDYAML(group, bdtest.GizmoV1().Without("color").Requiring("size"), ownedBy(bd)))).To(Succeed())
	})

	It("never judges a CRD no BundleDeployment installed", func(ctx context.Context) {
		const bd, group = "crd-not-owned", "notowned.safety.example.com"
		gizmoSetup(ctx, bd, group, nil)
		Expect(bdtest.ApplyCRD(ctx, bdtest.GizmoCRDYAML(group, bdtest.GizmoV1().Without("color").Requiring("size"), nil))).To(Succeed())
	})

	// config/webhook's failure policy: while no adapter answers, a change of
	// a BundleDeployment's CRD's spec is refused; CRDs of others, metadata
	// changes, opting out and deleting are not held up.
	It("refuses spec changes of BundleDeployment CRDs only while the adapter is stopped", func(ctx context.Context) {
		const bd, group = "crd-adapter-down", "down.safety.example.com"
		gizmoSetup(ctx, bd, group, ownedBy(bd))
		other := bdtest.GizmoCRDYAML("other-"+group, bdtest.GizmoV1(), nil)
		Expect(bdtest.ApplyCRD(ctx, other)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, bdtest.CRD(other)) })

		stopAdapter()
		DeferCleanup(func(ctx context.Context) { startAdapter(ctx) })
		err := bdtest.ApplyCRD(ctx, bdtest.GizmoCRDYAML(group, bdtest.GizmoV1().With("shape", "string"), ownedBy(bd)))
		Expect(err).To(MatchError(ContainSubstring(`failed calling webhook "crd-upgrade-safety.core.rukpak.io"`)))
		Expect(bdtest.ApplyCRD(ctx, bdtest.GizmoCRDYAML("other-"+group, bdtest.GizmoV1().Without("color"), nil))).To(Succeed(), "a CRD no BundleDeployment installed")
		name := "gizmos." + group
		patch := func(p string) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			crd.Name = name
			return env.Client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(p)))
		}
		Expect(patch(`{"metadata":{"labels":{"someone":"else"}}}`)).To(Succeed(), "a metadata-only change")
		Expect(patch(`{"metadata":{"annotations":{"core.rukpak.io/safe-crd-upgrade-validation":"false"}}}`)).To(Succeed(), "opting out")
		Expect(bdtest.ApplyCRD(ctx, bdtest.GizmoCRDYAML(group, bdtest.GizmoV1().With("shape", "string"), ownedBy(bd)))).To(Succeed(),
			"a spec change of a CRD the live object opts out (the update itself, as kapp's, carries no annotation)")

		By("deleting the CRD: the API server's removal of its finalizer is not held up")
		gone := &apiextensionsv1.CustomResourceDefinition{}
		gone.Name = name
		Expect(env.Client.Delete(ctx, gone)).To(Succeed())
		Eventually(func() error {
			return env.Client.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(MatchError(ContainSubstring("not found")))
	})

	It("keeps its certificate in the system namespace and its CA in the webhook configuration, across restarts", func(ctx context.Context) {
		secret := &corev1.Secret{}
		key := client.ObjectKey{Namespace: harness.SystemNamespace, Name: webhooks.DefaultSecret}
		Eventually(func() error { return env.Client.Get(ctx, key, secret) }).WithContext(ctx).Should(Succeed())
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		Eventually(func() ([]byte, error) {
			err := env.Client.Get(ctx, client.ObjectKey{Name: crdsafety.ConfigurationName}, vwc)
			return vwc.Webhooks[0].ClientConfig.CABundle, err
		}).WithContext(ctx).Should(Equal(secret.Data["ca.crt"]))
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(vwc.Webhooks[0].ClientConfig.CABundle)).To(BeTrue())

		By("a restarted adapter serves what is stored, writing nothing")
		restartAdapter(ctx)
		Consistently(func(g Gomega) {
			now := &corev1.Secret{}
			g.Expect(env.Client.Get(ctx, key, now)).To(Succeed())
			g.Expect(now.ResourceVersion).To(Equal(secret.ResourceVersion))
			live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: crdsafety.ConfigurationName}, live)).To(Succeed())
			g.Expect(live.ResourceVersion).To(Equal(vwc.ResourceVersion))
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())

		By("a caBundle emptied by hand is written again at once")
		vwc.Webhooks[0].ClientConfig.CABundle = nil
		Expect(env.Client.Update(ctx, vwc)).To(Succeed())
		Eventually(func() ([]byte, error) {
			live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			err := env.Client.Get(ctx, client.ObjectKey{Name: crdsafety.ConfigurationName}, live)
			return live.Webhooks[0].ClientConfig.CABundle, err
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Equal(secret.Data["ca.crt"]))
	})
})

func liveCRD(ctx context.Context, name string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
	return crd
}

// updateCRD writes crd over the live one (its resourceVersion taken from
// the live one).
func updateCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	crd.ResourceVersion = liveCRD(ctx, crd.Name).ResourceVersion
	return env.Client.Update(ctx, crd)
}

func requireSize(crd *apiextensionsv1.CustomResourceDefinition) apiextensionsv1.JSONSchemaProps {
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Required = []string{"size"}
	return spec
}
