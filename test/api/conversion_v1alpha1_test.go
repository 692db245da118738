package api_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

const (
	bdCRD          = "bundledeployments.core.rukpak.io"
	webhookService = "rukpak-kapp-webhook"
)

// updateCRD changes the BundleDeployment CRD, retrying on conflicts.
func updateCRD(ctx context.Context, change func(*apiextensionsv1.CustomResourceDefinition)) {
	GinkgoHelper()
	Eventually(func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: bdCRD}, crd); err != nil {
			return err
		}
		change(crd)
		return env.Client.Update(ctx, crd)
	}).WithContext(ctx).Should(Succeed())
}

func setStorage(ctx context.Context, version string) {
	GinkgoHelper()
	updateCRD(ctx, func(crd *apiextensionsv1.CustomResourceDefinition) {
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
		}
	})
}

// useStorage makes version the CRD's storage version and returns once
// kube-apiserver writes new objects in it. It swaps its storage when its
// CRD informer sees the change, which nothing reports: a probe object,
// written until it lands at that version, is the only sign.
func useStorage(ctx context.Context, version string) {
	GinkgoHelper()
	setStorage(ctx, version)
	const probe = "storage-probe"
	Eventually(func(g Gomega) {
		g.Expect(deleteBD(ctx, probe)).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: probe}, &rukpakv1alpha2.BundleDeployment{})).
			To(MatchError(ContainSubstring("not found")))
		g.Expect(env.Client.Create(ctx, validBD(probe))).To(Succeed())
		g.Expect(storedAs(ctx, probe)).To(Equal("core.rukpak.io/" + version))
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	removeBD(ctx, probe)
	Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Name: probe}, &rukpakv1alpha2.BundleDeployment{})
	}).WithContext(ctx).Should(MatchError(ContainSubstring("not found")))
}

// storedAs is the apiVersion etcd holds the BundleDeployment in.
func storedAs(ctx context.Context, name string) (string, error) {
	data, err := env.ControlPlane.EtcdGet(ctx, "/registry/core.rukpak.io/bundledeployments/"+name)
	if err != nil || data == nil {
		return "", err
	}
	var obj struct {
		APIVersion string `json:"apiVersion"`
	}
	err = json.Unmarshal(data, &obj)
	return obj.APIVersion, err
}

// removeBD deletes a BundleDeployment at v1alpha2 (which needs no
// conversion), without the uninstall finalizer that config/admission adds
// and no adapter here removes.
func removeBD(ctx context.Context, name string) {
	GinkgoHelper()
	Eventually(func() error { return deleteBD(ctx, name) }).WithContext(ctx).Should(Succeed())
}

// deleteBD is one try of removeBD: nil once the delete is accepted with no
// finalizer left to hold it.
func deleteBD(ctx context.Context, name string) error {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, bd); err != nil {
		return client.IgnoreNotFound(err)
	}
	if len(bd.Finalizers) > 0 {
		bd.Finalizers = nil
		if err := env.Client.Update(ctx, bd); err != nil {
			return err
		}
	}
	return client.IgnoreNotFound(env.Client.Delete(ctx, bd))
}

// The conversion as kube-apiserver runs it: controller-runtime's conversion
// webhook handler over the API types (v1alpha2 the hub), reached through
// the Service the CRD names, as the adapter will serve it.
var _ = Describe("v1alpha1 and v1alpha2 BundleDeployments through the conversion webhook", Ordered, func() {
	BeforeAll(func(ctx context.Context) {
		ca, err := harness.NewTestCA("conversion-webhook")
		Expect(err).NotTo(HaveOccurred())
		tlsConfig, err := ca.ServerConfigFor(webhookService + "." + harness.SystemNamespace + ".svc")
		Expect(err).NotTo(HaveOccurred())
		ip, err := harness.HostIP()
		Expect(err).NotTo(HaveOccurred())
		ln, err := tls.Listen("tcp", net.JoinHostPort(ip, "0"), tlsConfig)
		Expect(err).NotTo(HaveOccurred())
		scheme := runtime.NewScheme()
		Expect(rukpakv1alpha1.AddToScheme(scheme)).To(Succeed())
		Expect(rukpakv1alpha2.AddToScheme(scheme)).To(Succeed())
		mux := http.NewServeMux()
		mux.Handle("/convert", conversion.NewWebhookHandler(scheme, conversion.NewRegistry()))
		// Handshakes fail until kube-apiserver has the CA: said in the spec's log.
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(GinkgoWriter, "conversion webhook: ", 0)}
		go func() { _ = srv.Serve(ln) }()
		DeferCleanup(srv.Close)

		// The Service is config/webhook's (installed with the API); only
		// its endpoints lead here, on its port's name.
		Expect(env.RouteToHost(ctx, harness.SystemNamespace, webhookService, "webhook", ip, int32(ln.Addr().(*net.TCPAddr).Port))).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(env.Client.Delete(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: webhookService + "-host"}})).To(Succeed())
		})
		updateCRD(ctx, func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Webhook.ClientConfig.CABundle = ca.PEM
		})
		DeferCleanup(func(ctx context.Context) {
			updateCRD(ctx, func(crd *apiextensionsv1.CustomResourceDefinition) {
				crd.Spec.Conversion.Webhook.ClientConfig.CABundle = nil
			})
		})
		// A dry run is converted too (to the stored version), even with no
		// objects to list.
		Eventually(func() error { return env.Client.Create(ctx, validV1alpha1BD("conversion-probe"), client.DryRunAll) }).WithContext(ctx).
			WithTimeout(30*time.Second).Should(Succeed(), "kube-apiserver reaches the webhook")
	})

	It("stores a v1alpha1 BundleDeployment as v1alpha2 and serves it back unchanged at v1alpha1", func(ctx context.Context) {
		bd := validV1alpha1BD("written-at-v1alpha1")
		bd.Spec.Template.Spec.ProvisionerClassName = rukpakv1alpha1.ClassRegistry
		Expect(env.Client.Create(ctx, bd)).To(Succeed())
		DeferCleanup(removeBD, bd.Name)
		Expect(storedAs(ctx, bd.Name)).To(Equal("core.rukpak.io/v1alpha2"))

		hub := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), hub)).To(Succeed())
		Expect(hub.Spec.ProvisionerClassName).To(Equal(rukpakv1alpha1.ClassRegistry), "the template's class, as rukpak v0.17 wired registry+v1")
		Expect(hub.Spec.Source.Image.Ref).To(Equal(bd.Spec.Template.Spec.Source.Image.Ref))
		Expect(rukpakv1alpha1.IsV1alpha1(hub)).To(BeTrue())
		Expect(hub.Annotations).To(Equal(map[string]string{rukpakv1alpha1.AnnotationV1alpha1Spec: `{"templateMetadata":{"labels":{"app":"my-bundle"}}}`}))

		spoke := &rukpakv1alpha1.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), spoke)).To(Succeed())
		Expect(spoke.Spec).To(Equal(bd.Spec))
		Expect(spoke.Annotations).To(BeEmpty())

		By("a status written at v1alpha1, activeBundle included, reads back at both versions")
		spoke.Status = rukpakv1alpha1.BundleDeploymentStatus{ActiveBundle: "written-at-v1alpha1-abc", ObservedGeneration: spoke.Generation,
			Conditions: []metav1.Condition{{Type: rukpakv1alpha1.TypeInstalled, Status: metav1.ConditionTrue, Reason: rukpakv1alpha1.ReasonInstallationSucceeded,
				Message: "Instantiated bundle written-at-v1alpha1-abc successfully", LastTransitionTime: metav1.Now()}}}
		Expect(env.Client.Status().Update(ctx, spoke)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), hub)).To(Succeed())
		Expect(hub.Annotations).To(HaveKeyWithValue(rukpakv1alpha1.AnnotationActiveBundle, "written-at-v1alpha1-abc"))
		Expect(hub.Status.Conditions).To(HaveLen(1))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), spoke)).To(Succeed())
		Expect(spoke.Status.ActiveBundle).To(Equal("written-at-v1alpha1-abc"))

		By("a change written at v1alpha2 reads at v1alpha1 with the template's metadata and activeBundle kept")
		hub.Spec.Source.Image.Ref = "registry.example/bundles/registry:v2"
		Expect(env.Client.Update(ctx, hub)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), spoke)).To(Succeed())
		Expect(spoke.Spec.Template.Spec.Source.Image.Ref).To(Equal("registry.example/bundles/registry:v2"))
		Expect(spoke.Spec.Template.Labels).To(Equal(map[string]string{"app": "my-bundle"}))
		Expect(spoke.Spec.ProvisionerClassName).To(Equal(rukpakv1alpha1.ClassPlain))
		Expect(spoke.Status.ActiveBundle).To(Equal("written-at-v1alpha1-abc"))
		Expect(spoke.Generation).To(Equal(hub.Generation))
	})

	It("keeps what a v1alpha2 BundleDeployment says beyond v1alpha1 when it is written back at v1alpha1", func(ctx context.Context) {
		bd := validBD("written-at-v1alpha2")
		bd.Spec.Source.Image.InsecureSkipTLSVerify = true
		Expect(env.Client.Create(ctx, bd)).To(Succeed())
		DeferCleanup(removeBD, bd.Name)

		spoke := &rukpakv1alpha1.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), spoke)).To(Succeed())
		Expect(spoke.Annotations).To(HaveKeyWithValue(rukpakv1alpha1.AnnotationV1alpha2Fields, `{"installNamespace":"default","image":{"insecureSkipTLSVerify":true}}`))
		spoke.Labels = map[string]string{"edited-at": "v1alpha1"}
		Expect(env.Client.Update(ctx, spoke)).To(Succeed())

		hub := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), hub)).To(Succeed())
		Expect(hub.Labels).To(Equal(map[string]string{"edited-at": "v1alpha1"}))
		Expect(hub.Annotations).To(BeEmpty())
		Expect(hub.Spec).To(Equal(bd.Spec))
		Expect(rukpakv1alpha1.IsV1alpha1(hub)).To(BeFalse())
	})

	// Last: it ends with the webhook gone.
	It("reads objects stored as v1alpha1 (by rukpak v0.16) through it, until each is rewritten once and storedVersions is v1alpha2", func(ctx context.Context) {
		By("storing a BundleDeployment as v1alpha1, as rukpak v0.16's CRD did")
		useStorage(ctx, "v1alpha1")
		DeferCleanup(func(ctx context.Context) { useStorage(ctx, "v1alpha2") })
		legacy := validV1alpha1BD("stored-as-v1alpha1")
		Expect(env.Client.Create(ctx, legacy)).To(Succeed())
		Expect(storedAs(ctx, legacy.Name)).To(Equal("core.rukpak.io/v1alpha1"))
		DeferCleanup(removeBD, legacy.Name)
		useStorage(ctx, "v1alpha2")
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdCRD}, crd)).To(Succeed())
		Expect(crd.Status.StoredVersions).To(ConsistOf("v1alpha1", "v1alpha2"))

		By("reading it at v1alpha2 through the webhook")
		hub := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(legacy), hub)).To(Succeed())
		Expect(hub.Spec.Source.Image.Ref).To(Equal(legacy.Spec.Template.Spec.Source.Image.Ref))
		Expect(storedAs(ctx, legacy.Name)).To(Equal("core.rukpak.io/v1alpha1"), "reading does not migrate")

		By("migrating: every object rewritten once unchanged, then storedVersions set to v1alpha2")
		Eventually(func(g Gomega) {
			list := &rukpakv1alpha2.BundleDeploymentList{}
			g.Expect(env.Client.List(ctx, list)).To(Succeed())
			for i := range list.Items {
				before := list.Items[i].Generation
				g.Expect(env.Client.Update(ctx, &list.Items[i])).To(Succeed())
				g.Expect(list.Items[i].Generation).To(Equal(before), "a rewrite is no spec change")
			}
		}).WithContext(ctx).Should(Succeed())
		Expect(storedAs(ctx, legacy.Name)).To(Equal("core.rukpak.io/v1alpha2"))
		crd.Status.StoredVersions = []string{"v1alpha2"}
		Expect(env.Client.Status().Update(ctx, crd)).To(Succeed())

		By("without the webhook, the migrated object is served at v1alpha2 and only v1alpha1 requests fail")
		updateCRD(ctx, func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion.Webhook.ClientConfig.CABundle = nil
		})
		Eventually(func() error {
			return env.Client.Get(ctx, client.ObjectKeyFromObject(legacy), &rukpakv1alpha1.BundleDeployment{})
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(MatchError(ContainSubstring("conversion webhook")))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(legacy), hub)).To(Succeed())
		Expect(env.Client.List(ctx, &rukpakv1alpha2.BundleDeploymentList{})).To(Succeed())
		fmt.Fprintln(GinkgoWriter, "migrated: stored as v1alpha2, storedVersions [v1alpha2]")
	})
})
