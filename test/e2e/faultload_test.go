package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The fault test (make fault-test; docs/reliability.md): 60
// BundleDeployments installing and upgrading while kapp-controller is killed
// (SIGKILL) during the installs and the upgrades, and kube-apiserver is
// stopped while kapp-controller finishes runs. Its own label keeps it out of
// make test.

const faultLoadBDs = 60

// The plain bundle: a ConfigMap and a Deployment kapp waits for, into a
// namespace of each BundleDeployment's own.
func faultPlainBundle(version string) string {
	return dirBundle("faultload-plain-"+version, map[string]string{"manifests/objects.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  version: ` + version + `
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: workload
spec:
  replicas: 1
  selector:
    matchLabels:
      app: workload
  template:
    metadata:
      labels:
        app: workload
      annotations:
        version: ` + version + `
    spec:
      containers:
      - name: main
        image: registry.invalid/workload:v1
`})
}

// The chart: the same objects named after the release; its values' version
// is upgraded.
func faultChart() string {
	dir := GinkgoT().TempDir()
	Expect(os.MkdirAll(filepath.Join(dir, "templates"), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: faultload\nversion: 0.1.0\n"), 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "values.yaml"), []byte("version: v1\n"), 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "templates", "objects.yaml"), []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  version: {{ .Values.version }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-workload
spec:
  replicas: 1
  selector:
    matchLabels:
      app: {{ .Release.Name }}-workload
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}-workload
      annotations:
        version: {{ .Values.version }}
    spec:
      containers:
      - name: main
        image: registry.invalid/workload:v1
`), 0o644)).To(Succeed())
	tgz, err := harness.TarGz(dir)
	Expect(err).NotTo(HaveOccurred())
	return env.Files.Put("/faultload/chart.tgz", tgz)
}

// bdVersions keeps every version of the BundleDeployments a watch delivers,
// watching again (from the last version seen) whenever the watch ends, as
// it does while kube-apiserver is away.
type bdVersions struct {
	mu   sync.Mutex
	seen []*rukpakv1alpha2.BundleDeployment
}

func watchAllBDs(ctx context.Context, selector client.MatchingLabels) *bdVersions {
	v := &bdVersions{}
	wc, err := client.NewWithWatch(env.ControlPlane.Config, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	wctx, stop := context.WithCancel(ctx)
	DeferCleanup(stop)
	go func() {
		rv := ""
		for wctx.Err() == nil {
			w, err := wc.Watch(wctx, &rukpakv1alpha2.BundleDeploymentList{}, selector, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				bd, ok := ev.Object.(*rukpakv1alpha2.BundleDeployment)
				if !ok || ev.Type == watch.Error {
					if ev.Type == watch.Error {
						rv = "" // expired: start over from a list
					}
					continue
				}
				rv = bd.ResourceVersion
				v.mu.Lock()
				v.seen = append(v.seen, bd)
				v.mu.Unlock()
			}
			w.Stop()
		}
	}()
	return v
}

func (v *bdVersions) all() []*rukpakv1alpha2.BundleDeployment {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.seen)
}

// seenCause is a message naming what was seen and is not the bundle's: the
// API server away, or kapp-controller's sidecar losing its own process
// (kapp-controller v0.53.1's race, which the message names as such).
var seenCause = regexp.MustCompile(`connection refused|connection reset|EOF|i/o timeout|the server is currently unable|TLS handshake|` +
	`http2: client connection|context deadline exceeded|ServiceUnavailable|etcdserver|not a problem of the bundle`)

// falseCauses are the failures named in versions whose bundles are fine,
// but for those naming the API server's absence.
func falseCauses(versions []*rukpakv1alpha2.BundleDeployment) (falseOnes, seen []string) {
	for _, bd := range versions {
		for _, c := range bd.Status.Conditions {
			if c.Status != metav1.ConditionFalse || !slices.Contains([]string{rukpakv1alpha2.ReasonInstallFailed, rukpakv1alpha2.ReasonUpgradeFailed, rukpakv1alpha2.ReasonUnpackFailed}, c.Reason) {
				continue
			}
			line := fmt.Sprintf("%s rv %s %s %s: %s", bd.Name, bd.ResourceVersion, c.Type, c.Reason, c.Message)
			if seenCause.MatchString(c.Message) && !strings.Contains(c.Message, "template step") {
				seen = append(seen, line)
			} else {
				falseOnes = append(falseOnes, line)
			}
		}
	}
	return falseOnes, seen
}

// reconcilingApps counts the Apps of the run that kapp-controller reports
// under way, and those in their deploy step.
func reconcilingApps(ctx context.Context) (running, deploying int) {
	apps := &kappctrlv1alpha1.AppList{}
	if env.Client.List(ctx, apps, client.InNamespace(harness.SystemNamespace)) != nil {
		return 0, 0
	}
	for i := range apps.Items {
		app := &apps.Items[i]
		if !strings.HasPrefix(app.Name, "fl-") || app.Status.ObservedGeneration != app.Generation {
			continue
		}
		switch status.RunStep(app) {
		case status.StepNone:
		case status.StepDeploy:
			running++
			deploying++
		default:
			running++
		}
	}
	return running, deploying
}

// notInstalled lists the BundleDeployments not yet Installed=True
// at their generation.
func notInstalled(ctx context.Context, names []string) func() ([]string, error) {
	return func() ([]string, error) {
		var out []string
		for _, name := range names {
			bd := &rukpakv1alpha2.BundleDeployment{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, bd); err != nil {
				return nil, err
			}
			c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != bd.Generation {
				out = append(out, name)
			}
		}
		return out, nil
	}
}

var _ = Describe("faults under load", Label("fault-load"), Serial, func() {
	It("installs and upgrades 60 BundleDeployments through kapp-controller kills and a kube-apiserver stop, naming no false cause", func(ctx context.Context) {
		v1, v2 := faultPlainBundle("v1"), faultPlainBundle("v2")
		chart := faultChart()
		label := client.MatchingLabels{"faultload": "yes"}
		versions := watchAllBDs(ctx, label)
		var names []string
		for i := range faultLoadBDs {
			name := fmt.Sprintf("fl-%02d", i)
			names = append(names, name)
			labelled := func(bd *rukpakv1alpha2.BundleDeployment) { bd.Labels = map[string]string{"faultload": "yes"} }
			if i%3 == 2 {
				helmBD(ctx, name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: chart}}, labelled)
				continue
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
			Expect(env.Client.Create(ctx, ns)).To(Succeed())
			DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, ns) })
			plainBD(ctx, name, v1, labelled, func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.InstallNamespace = name })
		}
		start := time.Now()
		faults := []string{}
		fault := func(what string) {
			faults = append(faults, fmt.Sprintf("%6.1fs %s", time.Since(start).Seconds(), what))
		}

		By("kill -9 kapp-controller while the installs run")
		Eventually(func() int { r, _ := reconcilingApps(ctx); return r }).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(BeNumerically(">=", 3))
		env.KappController.KillController()
		fault("kapp-controller killed")
		time.Sleep(3 * time.Second)
		Expect(env.KappController.StartController(ctx)).To(Succeed())
		fault("kapp-controller started")

		By("upgrading every BundleDeployment while the first wave installs")
		Eventually(func() int { n, _ := notInstalled(ctx, names)(); return faultLoadBDs - len(n) }).WithTimeout(3 * time.Minute).Should(BeNumerically(">=", faultLoadBDs/3))
		for i, name := range names {
			Eventually(func() error {
				bd := &rukpakv1alpha2.BundleDeployment{}
				if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, bd); err != nil {
					return err
				}
				if i%3 == 2 {
					bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"version":"v2"}`)}
				} else {
					bd.Spec.Source.Image.Ref = v2
				}
				return env.Client.Update(ctx, bd)
			}).Should(Succeed())
		}
		fault("every BundleDeployment upgraded")

		By("stopping kube-apiserver while kapp-controller finishes deploys")
		Eventually(func() int { _, d := reconcilingApps(ctx); return d }).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(BeNumerically(">=", 2))
		env.ControlPlane.StopAPIServer()
		fault("kube-apiserver stopped")
		time.Sleep(15 * time.Second)
		Expect(env.ControlPlane.StartAPIServer(ctx)).To(Succeed())
		fault("kube-apiserver started")

		By("kill -9 kapp-controller once more while the upgrades run")
		Eventually(func() int { r, _ := reconcilingApps(ctx); return r }).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(BeNumerically(">=", 2))
		env.KappController.KillController()
		fault("kapp-controller killed")
		time.Sleep(3 * time.Second)
		Expect(env.KappController.StartController(ctx)).To(Succeed())
		last := time.Now()
		fault("kapp-controller started (the last fault)")

		By("every BundleDeployment Installed at its generation within 2 minutes of the last fault")
		GinkgoWriter.Printf("faults:\n  %s\n", strings.Join(faults, "\n  "))
		installedAt := map[string]time.Duration{}
		Eventually(func() ([]string, error) {
			left, err := notInstalled(ctx, names)()
			for _, name := range names {
				if _, ok := installedAt[name]; !ok && err == nil && !slices.Contains(left, name) {
					installedAt[name] = time.Since(last)
				}
			}
			return left, err
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(BeEmpty())
		recovered := time.Since(last)
		times := make([]time.Duration, 0, len(installedAt))
		for _, d := range installedAt {
			times = append(times, d)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		GinkgoWriter.Printf("all %d Installed at their generation %s after the last fault (median %s, 90th percentile %s)\n",
			faultLoadBDs, recovered.Round(time.Second), times[len(times)/2].Round(time.Second), times[len(times)*9/10].Round(time.Second))
		reruns := scrape(ctx, "rukpak_kapp_stalled_reruns_total", nil)
		GinkgoWriter.Printf("runs asked for because kapp-controller lost them: %.0f\n", reruns)

		By("no version of any BundleDeployment named a false cause")
		all := versions.all()
		falseOnes, seen := falseCauses(all)
		GinkgoWriter.Printf("%d status versions watched; failures naming a cause that is not the bundle's (the API server away, kapp-controller's own): %d\n", len(all), len(seen))
		for _, s := range seen {
			GinkgoWriter.Printf("  %s\n", s)
		}
		Expect(falseOnes).To(BeEmpty())
	})
})
