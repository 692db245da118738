// The reconciler suite runs the adapter in this process against a real
// kube-apiserver, with real registries and git and file servers, and no
// kapp-controller: each spec writes the App's status itself, as
// kapp-controller would, so every state of the status mapping and every
// adapter-side failure is reached in seconds. What needs kapp-controller
// (fetch, template and deploy for real) is in the end-to-end suite.
package reconciler_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var (
	env *harness.Env
	// images maps a rukpak test bundle (plain-v0/valid) to its reference
	// by tag, pinned to the one by digest.
	images, pinned = map[string]string{}, map[string]string{}
	// stopAdapter ends the adapter running in this process.
	stopAdapter func()
	// adapterCache is the informer cache of the adapter running now.
	adapterCache cache.Cache
	// stopStandIn ends the stand-in for kapp-controller's deletes.
	stopStandIn = func() {}
	// appNamespaces is the adapter's --app-namespaces from its next start.
	appNamespaces []string
)

// branchPeriod is short here: the adapter's own branch check has no floor.
const branchPeriod = 2 * time.Second

func TestReconciler(t *testing.T) {
	bdtest.RunSuite(t, "Reconciler Suite", 30*time.Second, 100*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	env, err = harness.Start(ctx, harness.Options{KappControllerAPI: true, Servers: true})
	Expect(err).NotTo(HaveOccurred())
	bdtest.Use(env)
	for _, name := range []string{"valid", "empty", "subdir"} {
		ref, digest, err := env.Registry.PushDir(bdtest.Testdata("rukpak-bundles", "plain-v0", name), "bundles/plain-v0:"+name)
		Expect(err).NotTo(HaveOccurred())
		images["plain-v0/"+name], pinned["plain-v0/"+name] = ref, ref[:strings.LastIndex(ref, ":")]+"@"+digest.String()
	}
	ctrl.SetLogger(countingReconciles(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true))))
	var standInCtx context.Context
	standInCtx, stopStandIn = context.WithCancel(context.WithoutCancel(ctx))
	standInForAppDeletes(standInCtx)
	startAdapter(ctx)
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if stopAdapter != nil {
		stopAdapter()
	}
	stopStandIn()
	if env != nil {
		env.Stop()
	}
})

// startAdapter runs the adapter as its own ServiceAccount (config/rbac),
// with the settings the harness gives the adapter process.
func startAdapter(ctx context.Context) {
	kubeconfig, err := env.ServiceAccountKubeconfig(ctx, harness.SystemNamespace, harness.AdapterServiceAccount)
	Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	classes, err := adapter.ParseClasses([]string{rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry,
		harness.AliasPlainClass + "=" + rukpakv1alpha2.ClassPlain})
	Expect(err).NotTo(HaveOccurred())
	webhooks, err := env.AdapterWebhookAddress(ctx)
	Expect(err).NotTo(HaveOccurred())
	mgr, err := adapter.NewManager(cfg, adapter.Options{
		Config: translate.Config{
			SystemNamespace:    harness.SystemNamespace,
			AppNamespaces:      appNamespaces,
			ServiceAccountName: "rukpak-kapp-installer",
			SyncPeriod:         10 * time.Minute,
			BranchSyncPeriod:   branchPeriod,
			TemplateTimeout:    10 * time.Second,
			// contentURLs name the address the specs reach the webhook
			// server at (harness.ContentClient verifies it as the Service).
			ContentAddress: "https://" + webhooks,
		},
		Classes:     classes,
		MetricsAddr: "0",
		ProbeAddr:   "0",
		WebhookAddr: webhooks,
		Restartable: true,
		ContentDir:  contentDir(),
	})
	Expect(err).NotTo(HaveOccurred())
	adapterCache = mgr.GetCache()
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(mctx)).To(Succeed())
	}()
	stopAdapter = func() { cancel(); <-done }
}

// contentDir is where the adapter in this process keeps what contentURLs
// serve.
func contentDir() string { return filepath.Join(env.Dir, "adapter-content") }

// restartAdapter stops the adapter and starts a fresh one, with nothing in
// memory, as a new Pod would.
func restartAdapter(ctx context.Context) {
	stopAdapter()
	startAdapter(ctx)
}

// A failed spec prints every BundleDeployment and App as they are.
var _ = JustAfterEach(func(ctx context.Context) {
	if !CurrentSpecReport().Failed() || env == nil {
		return
	}
	bds := &rukpakv1alpha2.BundleDeploymentList{}
	if err := env.Client.List(ctx, bds); err == nil {
		for _, bd := range bds.Items {
			out, _ := yaml.Marshal(bd.Status)
			GinkgoWriter.Printf("--- BundleDeployment %s (generation %d) status:\n%s\n", bd.Name, bd.Generation, out)
		}
	}
	apps := &kappctrlv1alpha1.AppList{}
	if err := env.Client.List(ctx, apps); err == nil {
		for _, app := range apps.Items {
			out, _ := yaml.Marshal(app.ObjectMeta.Annotations)
			GinkgoWriter.Printf("--- App %s generation %d, annotations:\n%s\n", app.Name, app.Generation, strings.TrimSpace(string(out)))
		}
	}
})

func objectMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}

// counter is the value of the adapter's counter metric name in this
// process, summed over the series whose labels include match.
func counter(name string, match map[string]string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if mapsContain(labels, match) {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

func mapsContain(m, sub map[string]string) bool {
	for k, v := range sub {
		if m[k] != v {
			return false
		}
	}
	return true
}

// reconciles counts the adapter's reconciles so far, from the
// controller-runtime metrics of this process.
func reconciles() float64 {
	return counter("controller_runtime_reconcile_total", map[string]string{"controller": "bundledeployment"})
}
