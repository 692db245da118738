package packaging_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// refuseWrites answers kube-apiserver's admission reviews of
// kapp-controller's internal Packages in a namespace with a 503, as a
// storage that stopped taking writes would: the packaging API then fails
// every write with 503 while it answers discovery and reads. It counts the
// writes refused; stop takes the webhook away.
func refuseWrites(ctx context.Context, ns string) (refused *atomic.Int32, stop func(context.Context)) {
	ca, err := harness.NewTestCA("writes-refused")
	Expect(err).NotTo(HaveOccurred())
	tlsConfig, err := ca.ServerConfigFor("localhost")
	Expect(err).NotTo(HaveOccurred())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	refused = &atomic.Int32{}
	server := &http.Server{TLSConfig: tlsConfig, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		review := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
			http.Error(w, "no admission review", http.StatusBadRequest)
			return
		}
		refused.Add(1)
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Code: http.StatusServiceUnavailable, Reason: metav1.StatusReasonServiceUnavailable, Message: "the storage takes no writes"}}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	})}
	go func() { _ = server.ServeTLS(l, "", "") }()
	webhook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-package-writes-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "refuse.writes.test",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://" + l.Addr().String() + "/"), CABundle: ca.PEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{"internal.packaging.carvel.dev"}, APIVersions: []string{"*"}, Resources: []string{"internalpackages", "internalpackagemetadatas"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	Expect(env.Client.Create(ctx, webhook)).To(Succeed())
	return refused, func(ctx context.Context) {
		Expect(client.IgnoreNotFound(env.Client.Delete(ctx, webhook))).To(Succeed())
		_ = server.Close()
	}
}

var _ = Describe("the packaging API failing every write while it answers", Serial, func() {
	It("costs the registry no request and slows its writes to the backoff's cap; the catalog says PackagingAPIUnavailable and is published again once writes pass", func(ctx context.Context) {
		const ns = "catalog-writes-fail"
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		image := catalogOn(ctx, "catalog/writesfail:latest", 1<<10, false)
		cat := newCatalog(ctx, ns, "operators", image, func(cat *catalogsv1alpha1.OperatorCatalog) {
			// The poll a catalog has by default: the minute watched below
			// holds no poll, so every registry request would be the loop's.
			cat.Spec.PollInterval = nil
		})
		published(ctx, cat, "")
		pkgs := &datav1alpha1.PackageList{}
		Expect(env.Client.List(ctx, pkgs, client.InNamespace(ns))).To(Succeed())
		Expect(pkgs.Items).NotTo(BeEmpty())

		By("writes refused with 503, reads and discovery answering; a published Package deleted by hand")
		refused, stop := refuseWrites(ctx, ns)
		DeferCleanup(stop)
		registryBefore := env.Registry.Traffic.Requests("/catalog/writesfail/")
		Expect(env.Client.Delete(ctx, &pkgs.Items[0])).To(Succeed())
		condition(ctx, cat, catalogsv1alpha1.ReasonPackagingAPIUnavailable)
		d, err := discovery.NewDiscoveryClientForConfig(env.ControlPlane.Config)
		Expect(err).NotTo(HaveOccurred())
		_, err = d.ServerResourcesForGroupVersion("data.packaging.carvel.dev/v1alpha1")
		Expect(err).NotTo(HaveOccurred(), "discovery answers throughout")

		By("a minute of it: the catalog's probe ends each outage, its write starts the next")
		start := refused.Load()
		Consistently(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat)).To(Succeed())
			c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).NotTo(Equal(catalogsv1alpha1.ReasonPublished), "the deleted Package is not back")
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		writes := refused.Load() - start
		lookups := env.Registry.Traffic.Requests("/catalog/writesfail/") - registryBefore
		GinkgoWriter.Printf("in the minute: %d writes refused, %d registry requests\n", writes, lookups)
		Expect(lookups).To(BeNumerically("<=", 2), "the tag is looked up at its poll (10 min), not at each outage's end")
		// 250 ms doubling to 10 s is 12 looks in the first minute; the
		// kube-apiserver may call the webhook twice for one write.
		Expect(writes).To(And(BeNumerically(">=", 1), BeNumerically("<=", 30)), "the writes back off across outages")

		By("writes pass again: the Package is back within the backoff's cap")
		stop(ctx)
		Eventually(func(g Gomega) {
			got := &datav1alpha1.Package{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&pkgs.Items[0]), got)).To(Succeed())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		published(ctx, cat, "")
	}, SpecTimeout(4*time.Minute))
})
