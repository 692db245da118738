package packaging_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
)

// adapterMetric is the sum of the adapter's samples of metric whose labels
// hold labels (a name="value" pair).
func adapterMetric(ctx context.Context, metric, labels string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Adapter.MetricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	sum, found := 0.0, false
	for _, line := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(line, metric+"{")
		end := strings.LastIndex(rest, "} ")
		if !ok || end < 0 || !strings.Contains(rest[:end], labels) {
			continue
		}
		v, err := strconv.ParseFloat(rest[end+2:], 64)
		if err != nil {
			return 0, fmt.Errorf("metric %s: %w", line, err)
		}
		sum, found = sum+v, true
	}
	if !found {
		return 0, fmt.Errorf("the adapter reports no %s{%s}", metric, labels)
	}
	return sum, nil
}

var _ = Describe("kapp-controller stopped", Serial, func() {
	It("a catalog published says PackagingAPIUnavailable within 10 s of kapp-controller's stop; an adapter started five times while it is stopped stays up, converts and admits, says on the catalog what it waits for, and publishes once kapp-controller is back", func(ctx context.Context) {
		const ns = "catalog-outage"
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		image := catalogOn(ctx, "catalog/outage:latest", 1<<10, false)
		cat := newCatalog(ctx, ns, "operators", image)
		published(ctx, cat, "")

		By("kapp-controller stopped during the run: its aggregated packaging API answers 503, and the published catalog says so within 10 s")
		env.StopKappController()
		stopped := time.Now()
		DeferCleanup(func(ctx context.Context) {
			if env.KappController == nil {
				Expect(env.StartKappControllerAgain(ctx)).To(Succeed())
			}
		})
		d, err := discovery.NewDiscoveryClientForConfig(env.ControlPlane.Config)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error {
			_, err := d.ServerResourcesForGroupVersion("data.packaging.carvel.dev/v1alpha1")
			return err
		}).WithContext(ctx).WithTimeout(time.Minute).Should(MatchError(ContainSubstring("unable to handle the request")))
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat)).To(Succeed())
			c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(catalogsv1alpha1.ReasonPackagingAPIUnavailable), c.Message)
			g.Expect(c.Message).To(And(ContainSubstring("stopped answering"), ContainSubstring("unable to handle the request")), "the answer is named")
		}).WithContext(ctx).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("PackagingAPIUnavailable %s after kapp-controller stopped\n", time.Since(stopped).Round(100*time.Millisecond))

		By("five starts of the adapter: each serves its metrics and the conversion webhook's CA, and admits BundleDeployments")
		for range 5 {
			Expect(env.Adapter.Restart(ctx)).To(Succeed())
		}
		Expect(adapterMetric(ctx, "rukpak_kapp_api_served", `api="the catalog APIs"`)).To(Equal(0.0), "the catalogs and their Packages' cache wait")
		Expect(adapterMetric(ctx, "rukpak_kapp_api_served", `api="the OperatorInstall API"`)).To(Equal(1.0), "OperatorInstalls are reconciled, and say where they need a channel")
		Expect(adapterMetric(ctx, "rukpak_kapp_api_served", `api="kapp-controller's API"`)).To(Equal(1.0))
		c := condition(ctx, cat, catalogsv1alpha1.ReasonPackagingAPIUnavailable)
		Expect(c.Message).To(ContainSubstring("as soon as the API is back"))

		By("what needs no packaging API works: a BundleDeployment read as rukpak's first API goes through the conversion webhook")
		name := "outage-" + bdtest.RandSuffix()
		bdtest.PlainBD(ctx, name, bdtest.DirBundle(name, map[string]string{"manifests/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"}),
			func(bd *rukpakv1alpha2.BundleDeployment) {
				bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationInstallWith: "app"}
			})
		Eventually(func() error { _, err := bdtest.GetV1alpha1BD(ctx, name)(); return err }).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("kapp-controller back: the catalog is published without a restart of the adapter")
		Expect(env.StartKappControllerAgain(ctx)).To(Succeed())
		published(ctx, cat, "")
		Eventually(bdtest.GetBD(ctx, name)).WithContext(ctx).WithTimeout(2 * time.Minute).Should(
			bdtest.HaveCondition(rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded, ""))
		Expect(cat.Status.Packages).To(BeEquivalentTo(6))
		events := &eventsv1.EventList{}
		Expect(env.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		for _, e := range events.Items {
			Expect(e.Reason).NotTo(Equal(catalogsv1alpha1.ReasonWriteFailed), "an outage is no failed write: %s", e.Note)
		}
		Expect(adapterMetric(ctx, "rukpak_kapp_api_served", `api="the catalog APIs"`)).To(Equal(1.0))
	}, SpecTimeout(6*time.Minute))
})
