package e2e_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// hostIP is a non-loopback address of this machine: the API server refuses
// loopback addresses in Endpoints.
func hostIP() string {
	ip, err := harness.HostIP()
	Expect(err).NotTo(HaveOccurred(), "the webhook stand-in needs an address to listen on")
	return ip
}

// denyingWebhook stands in for the operator's pod: it serves admission
// reviews with the given certificate and denies every request.
func denyingWebhook(ip string, cert tls.Certificate) (int, func()) {
	l, err := tls.Listen("tcp", net.JoinHostPort(ip, "0"), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	Expect(err).NotTo(HaveOccurred())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		review := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{
			UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Message: "denied by the stand-in for the operator at " + r.URL.Path},
		}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	})}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().(*net.TCPAddr).Port, func() { _ = srv.Close() }
}

var _ = Describe("registry+v1 bundles with webhooks", func() {
	It("installs kube-green with a generated serving certificate that the API server trusts through the generated configuration", func(ctx context.Context) {
		const ns = "kube-green-system"
		ref, _, err := env.Registry.PushDir(filepath.Join(bundlesDir, "..", "registry-v1-corpus", "kube-green", "0.7.1"), "bundles/kube-green:0.7.1")
		Expect(err).NotTo(HaveOccurred())
		registryBD(ctx, "kube-green", ref, ns)
		Eventually(getBD(ctx, "kube-green")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		By("checking that the caBundle verifies the serving certificate for the Service's DNS name")
		const service = "kube-green-controller-manager-service"
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "vsleepinfo.kb.io"}, vwc)).To(Succeed())
		Expect(vwc.Webhooks).To(HaveLen(1))
		svcRef := vwc.Webhooks[0].ClientConfig.Service
		Expect(svcRef.Name).To(Equal(service))
		Expect(svcRef.Namespace).To(Equal(ns))
		secret := &corev1.Secret{}
		Expect(env.Client.Get(ctx, objKey(ns, service+"-cert"), secret)).To(Succeed())
		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(vwc.Webhooks[0].ClientConfig.CABundle)).To(BeTrue())
		pair, err := tls.X509KeyPair(secret.Data["tls.crt"], secret.Data["tls.key"])
		Expect(err).NotTo(HaveOccurred())
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		Expect(err).NotTo(HaveOccurred())
		_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: service + "." + ns + ".svc"})
		Expect(err).NotTo(HaveOccurred())

		By("checking the operator Deployment mounts the certificate where controller-runtime looks")
		dep := onlyDeployment(ctx, ns)
		Expect(dep.Spec.Template.Spec.Containers[0].VolumeMounts).To(ContainElement(HaveField("MountPath", "/tmp/k8s-webhook-server/serving-certs")))

		By("restarting the adapter: the stored certificates give the same content, so the App is not rewritten")
		before, err := getApp(ctx, "kube-green")
		Expect(err).NotTo(HaveOccurred())
		env.Adapter.Kill()
		Expect(env.Adapter.Start(ctx)).To(Succeed())
		Consistently(func(g Gomega) {
			after, err := getApp(ctx, "kube-green")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(after.Generation).To(Equal(before.Generation))
			g.Expect(after.Spec.Fetch).To(Equal(before.Spec.Fetch))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("routing the Service to a stand-in that serves with the generated certificate")
		// An installed object changed on purpose: its App is paused first,
		// or the adapter would have kapp-controller restore it in seconds.
		Expect(env.Client.Patch(ctx, &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: "kube-green"}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":true}}`)), client.FieldOwner("someone-by-hand"))).To(Succeed())
		ip := hostIP()
		port, stop := denyingWebhook(ip, pair)
		DeferCleanup(stop)
		svc := &corev1.Service{}
		Expect(env.Client.Get(ctx, objKey(ns, service), svc)).To(Succeed())
		Expect(env.RouteToHost(ctx, ns, service, svc.Spec.Ports[0].Name, ip, int32(port))).To(Succeed())

		By("creating a SleepInfo: the API server must call the stand-in and report its denial")
		Eventually(func() error {
			si := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kube-green.com/v1alpha1", "kind": "SleepInfo",
				"metadata": map[string]any{"name": "nightly", "namespace": "default"},
				"spec":     map[string]any{"weekdays": "1-5", "sleepAt": "20:00"},
			}}
			err := env.Client.Create(ctx, si)
			if err == nil {
				_ = env.Client.Delete(ctx, si)
				return errors.New("the SleepInfo was admitted without asking the webhook")
			}
			return err
		}).WithContext(ctx).WithTimeout(time.Minute).Should(MatchError(ContainSubstring("denied by the stand-in for the operator at /validate-kube-green-com-v1alpha1-sleepinfo")))
		fmt.Fprintf(GinkgoWriter, "API server reached the stand-in at %s:%d through %s\n", ip, port, vwc.Name)
	})
})
