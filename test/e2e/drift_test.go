package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// restoredWithin polls every 100 ms until ok, and returns how long it took.
func restoredWithin(ctx context.Context, bound time.Duration, ok func() bool) time.Duration {
	GinkgoHelper()
	start := time.Now()
	Eventually(ok).WithContext(ctx).WithTimeout(bound).WithPolling(100 * time.Millisecond).Should(BeTrue())
	return time.Since(start)
}

// appSettled says kapp-controller has deployed the App's current spec.
func appSettled(ctx context.Context, name string) func() bool {
	return func() bool {
		app, err := getApp(ctx, name)
		return err == nil && app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
			app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded
	}
}

func appGen(ctx context.Context, name string) func() int64 {
	return func() int64 {
		app, err := getApp(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		return app.Generation
	}
}

func setReplicas(ctx context.Context, key client.ObjectKey, n int32, writer string) error {
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, key, d); err != nil {
		return err
	}
	before := d.DeepCopy()
	d.Spec.Replicas = ptr.To(n)
	return env.Client.Patch(ctx, d, client.MergeFrom(before), client.FieldOwner(writer))
}

func replicasOf(ctx context.Context, key client.ObjectKey) int32 {
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, key, d); err != nil || d.Spec.Replicas == nil {
		return -1
	}
	return *d.Spec.Replicas
}

var _ = Describe("drift repair", func() {
	// A fight with another writer, bounded by the backoff, is the reconciler
	// suite's "keeps a fight with another writer bounded" and the backoff's
	// TestFightSchedule.
	It("restores a deleted ConfigMap and a Deployment's edited replicas within 5 s, at the default sync period", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(filepath.Join("testdata", "drift"), "bundles/drift:v1")
		Expect(err).NotTo(HaveOccurred())
		const name = "drift"
		plainBD(ctx, name, ref)
		// The earliest a client can know the install is done: kapp-controller's
		// report, which the adapter turns into Installed=True.
		Eventually(appSettled(ctx, name)).WithPolling(10 * time.Millisecond).Should(BeTrue())
		settings, workload := objKey("default", "drift-settings"), objKey("default", "drift-workload")
		gen := appGen(ctx, name)()

		By("deleting the installed ConfigMap as soon as kapp-controller reports the install")
		Expect(env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "drift-settings"}})).To(Succeed())
		took := restoredWithin(ctx, 5*time.Second, func() bool {
			return env.Client.Get(ctx, settings, &corev1.ConfigMap{}) == nil
		})
		GinkgoWriter.Printf("deleted ConfigMap restored after %s\n", took)
		Eventually(appSettled(ctx, name)).Should(BeTrue())
		Expect(appGen(ctx, name)()).To(Equal(gen+1), "one re-apply")
		Eventually(func() ([]string, error) { return bdtest.EventNotes(ctx, name) }).Should(ContainElement(ContainSubstring("ConfigMap default/drift-settings was deleted")))

		By("kapp's own writes during the repair asked for nothing more")
		// A second re-apply would come 5 s after the first.
		Consistently(appGen(ctx, name), 6*time.Second).Should(Equal(gen + 1))

		By("editing the Deployment's replicas")
		Expect(setReplicas(ctx, workload, 3, "someone-by-hand")).To(Succeed())
		took = restoredWithin(ctx, 5*time.Second, func() bool { return replicasOf(ctx, workload) == 1 })
		GinkgoWriter.Printf("edited replicas restored after %s\n", took)
		Eventually(appSettled(ctx, name)).Should(BeTrue())
		Expect(appGen(ctx, name)()).To(Equal(gen + 2))
		Expect(mustBD(ctx, name)).To(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			haveCondition("Healthy", "True", "Healthy", ""),
		))
	})

	It("restores a chart's ConfigMap and Deployment deleted the moment kapp creates them within 5 s, canceling kapp's run, and never reports the bundle failed", func(ctx context.Context) {
		dir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(dir, "templates"), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: applying\nversion: 0.1.0\n"), 0o644)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "templates", "objects.yaml"), []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: applying-settings
  namespace: default
data:
  mode: strict
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: applying-workload
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels:
      app: applying-workload
  template:
    metadata:
      labels:
        app: applying-workload
    spec:
      containers:
      - name: main
        image: registry.invalid/applying:v1
`), 0o644)).To(Succeed())
		const name = "drift-applying"
		objects := []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "applying-settings"}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "applying-workload"}},
		}
		versions := record(ctx, &rukpakv1alpha2.BundleDeploymentList{}, client.MatchingFields{"metadata.name": name})
		appVersions := record(ctx, &kappctrlv1alpha1.AppList{}, client.InNamespace(harness.SystemNamespace), client.MatchingFields{"metadata.name": name})
		helmHTTP(dir, "")(ctx, name)

		By("deleting each object the moment it exists, for as long as kapp's first run goes on")
		// Left alone, kapp would stall on the first delete: it retries its
		// write of what it created for a minute, and creates nothing more
		// meanwhile. Drift repair cancels that run instead.
		var app *kappctrlv1alpha1.App
		Eventually(func() (bool, error) {
			var err error
			app, err = getApp(ctx, name)
			return err == nil && len(app.Status.Conditions) > 0 && app.Status.Conditions[0].Type == kappctrlv1alpha1.Reconciling &&
				app.Status.ObservedGeneration == app.Generation, err
		}).WithTimeout(time.Minute).WithPolling(10 * time.Millisecond).Should(BeTrue())
		runGen := app.Status.ObservedGeneration
		deletedUIDs := map[types.UID]bool{}
		var deleted time.Time
		for {
			a, err := getApp(ctx, name)
			Expect(err).NotTo(HaveOccurred())
			running := len(a.Status.Conditions) > 0 && a.Status.Conditions[0].Type == kappctrlv1alpha1.Reconciling
			if !running && a.Status.ObservedGeneration == runGen && len(deletedUIDs) == 0 && status.LostChild(a.Status.UsefulErrorMessage) {
				// kapp-controller lost its own ytt or vendir before kapp ran
				// (a race inside its sidecar, harness.Reconciled): the run
				// to watch is the retry it makes after a short backoff.
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if a.Status.ObservedGeneration != runGen || !running {
				break
			}
			for _, o := range objects {
				if env.Client.Get(ctx, client.ObjectKeyFromObject(o), o) != nil || deletedUIDs[o.GetUID()] {
					continue
				}
				uid := o.GetUID()
				Expect(client.IgnoreNotFound(env.Client.Delete(ctx, o, client.Preconditions{UID: &uid}))).To(Succeed())
				deletedUIDs[uid] = true
				deleted = time.Now()
				GinkgoWriter.Printf("deleted %s while kapp's run went on\n", o.GetName())
			}
			time.Sleep(10 * time.Millisecond)
		}
		Expect(deletedUIDs).NotTo(BeEmpty(), "something was deleted while kapp applied")

		waitFrom := time.Now()
		restored := waitFrom.Add(restoredWithin(ctx, 90*time.Second, func() bool {
			for _, o := range objects {
				if env.Client.Get(ctx, client.ObjectKeyFromObject(o), o) != nil || deletedUIDs[o.GetUID()] {
					return false
				}
			}
			return true
		}))
		// The run under way ends first (kapp-controller runs an App once at a
		// time), canceled by drift repair.
		var runEnded time.Time
		for _, v := range appVersions() {
			a := v.obj.(*kappctrlv1alpha1.App)
			if a.Status.ObservedGeneration == runGen && len(a.Status.Conditions) > 0 && a.Status.Conditions[0].Type != kappctrlv1alpha1.Reconciling {
				runEnded = v.at
				break
			}
		}
		Expect(runEnded).NotTo(BeZero(), "the run under way at the deletes ended")
		after := restored.Sub(runEnded)
		GinkgoWriter.Printf("every object there again %s after the last delete; the run under way ended %s after it; %s after the run ended\n",
			restored.Sub(deleted).Round(10*time.Millisecond), runEnded.Sub(deleted).Round(10*time.Millisecond), after.Round(10*time.Millisecond))
		Expect(restored.Sub(deleted)).To(BeNumerically("<=", 5*time.Second), "the last delete repaired within 5 s")
		Expect(after).To(BeNumerically("<=", 5*time.Second))
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		for _, v := range versions() {
			for _, c := range v.obj.(*rukpakv1alpha2.BundleDeployment).Status.Conditions {
				Expect(c.Reason).NotTo(BeElementOf("InstallFailed", "UpgradeFailed", "UnpackFailed"), "a status said the bundle failed: %s", c.Message)
			}
		}
	})
})
