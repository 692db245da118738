package e2e_test

import (
	"context"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	eventsv1 "k8s.io/api/events/v1"
)

// scrape reads the adapter's metrics endpoint and returns the samples of
// one family summed over the series whose labels contain match.
func scrape(ctx context.Context, family string, match map[string]string) float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Adapter.MetricsURL, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	f, ok := families[family]
	if !ok {
		return 0
	}
	for _, m := range f.Metric {
		if labelsMatch(m, match) {
			switch {
			case m.Counter != nil:
				total += m.Counter.GetValue()
			case m.Gauge != nil:
				total += m.Gauge.GetValue()
			case m.Histogram != nil:
				total += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return total
}

func labelsMatch(m *dto.Metric, match map[string]string) bool {
	found := 0
	for _, l := range m.Label {
		if v, ok := match[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(match)
}

var _ = Describe("the adapter's metrics", func() {
	It("count reconciles and BundleDeployments by state", func(ctx context.Context) {
		reconciles := map[string]string{"controller": "bundledeployment"}
		before := scrape(ctx, "controller_runtime_reconcile_total", reconciles)
		installedBefore := scrape(ctx, "rukpak_kapp_bundledeployments", map[string]string{"status": "True", "reason": "InstallationSucceeded"})

		plainBD(ctx, "metrics-valid", images["hello"])
		Eventually(getBD(ctx, "metrics-valid")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		Eventually(func() float64 { return scrape(ctx, "controller_runtime_reconcile_total", reconciles) }).Should(BeNumerically(">", before))
		Eventually(func() float64 {
			return scrape(ctx, "rukpak_kapp_bundledeployments", map[string]string{"status": "True", "reason": "InstallationSucceeded"})
		}).Should(Equal(installedBefore + 1))
		Expect(scrape(ctx, "controller_runtime_reconcile_time_seconds", reconciles)).To(BeNumerically(">", 0))

		By("recording one Event per transition, naming every condition that changed")
		Eventually(func() ([]string, error) {
			list := &eventsv1.EventList{}
			err := env.Client.List(ctx, list)
			var notes []string
			for _, e := range list.Items {
				if e.Regarding.Name == "metrics-valid" && e.Regarding.Kind == "BundleDeployment" {
					notes = append(notes, e.Type+" "+e.Reason+" "+e.Note)
				}
			}
			return notes, err
		}).Should(And(
			ContainElement(And(HavePrefix("Normal InstallationSucceeded "), ContainSubstring("Installed: Instantiated bundle metrics-valid"))),
			// With the outcome, or earlier with the progress of an install
			// that took longer than the progress delay.
			ContainElement(ContainSubstring("Unpacked: Successfully unpacked")),
		))
	})
})
