package reconciler_test

import (
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
)

// The helpers below write an App's status the way kapp-controller v0.53.1
// does (see adapter/status for what it reads): one condition, the stage
// sub-statuses, observedGeneration marked when a run starts.

// appFor waits until the adapter wrote the App of generation gen of the
// BundleDeployment name, and returns it.
func appFor(ctx context.Context, name string, gen int64) *kappctrlv1alpha1.App {
	var app *kappctrlv1alpha1.App
	EventuallyWithOffset(1, func(g Gomega) {
		var err error
		app, err = bdtest.GetApp(ctx, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(app.Annotations).To(HaveKeyWithValue(rukpakv1alpha2.AnnotationBundleGeneration, fmt.Sprint(gen)))
	}).WithContext(ctx).Should(Succeed())
	return app
}

// setAppStatus writes the status of the App's current spec.
func setAppStatus(ctx context.Context, name string, set func(*kappctrlv1alpha1.AppStatus)) {
	EventuallyWithOffset(2, func() error {
		app, err := bdtest.GetApp(ctx, name)
		if err != nil {
			return err
		}
		st := kappctrlv1alpha1.AppStatus{}
		st.ObservedGeneration = app.Generation
		set(&st)
		app.Status = st
		return env.Client.Status().Update(ctx, app)
	}).WithContext(ctx).Should(Succeed())
}

// lockOf is vendir's lock for an image, as kapp-controller prints it.
func lockOf(digestRef string) string {
	if digestRef == "" {
		return ""
	}
	return "Lock config\n\napiVersion: vendir.k14s.io/v1alpha1\ndirectories:\n- contents:\n  - image:\n      url: " + digestRef + "\n    path: .\n  path: \"0\"\nkind: LockConfig\n"
}

func fetchOK(digestRef string) *kappctrlv1alpha1.AppStatusFetch {
	now := metav1.Now()
	return &kappctrlv1alpha1.AppStatusFetch{StartedAt: now, UpdatedAt: metav1.NewTime(now.Add(time.Millisecond)), Stdout: lockOf(digestRef)}
}

func appCondition(t kappctrlv1alpha1.ConditionType) []kappctrlv1alpha1.Condition {
	return []kappctrlv1alpha1.Condition{{Type: t, Status: corev1.ConditionTrue}}
}

// appDeploying: the run fetched and templated, and kapp applies and waits,
// as kapp-controller writes it every 2 s.
func appDeploying(ctx context.Context, name, digestRef string) {
	setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
		st.Conditions = appCondition(kappctrlv1alpha1.Reconciling)
		st.Fetch = fetchOK(digestRef)
		st.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: st.Fetch.UpdatedAt}
		st.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: st.Fetch.UpdatedAt, UpdatedAt: metav1.Now(),
			Stdout: "12:00:00PM: ---- applying 1 changes [0/1 done] ----\n12:00:00PM: ---- waiting on 1 changes [0/1 done] ----\n"}
	})
}

// appSucceeded: the run deployed everything and it converged.
func appSucceeded(ctx context.Context, name, digestRef string) {
	setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
		st.Conditions = appCondition(kappctrlv1alpha1.ReconcileSucceeded)
		st.Fetch = fetchOK(digestRef)
		st.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: metav1.Now()}
		st.Deploy = &kappctrlv1alpha1.AppStatusDeploy{UpdatedAt: metav1.Now(), Finished: true}
		st.ConsecutiveReconcileSuccesses = 1
	})
}

// appDeployFailed: kapp failed; failures counts the failed runs in a row.
func appDeployFailed(ctx context.Context, name, stderr string, failures int) {
	setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
		st.Conditions = appCondition(kappctrlv1alpha1.ReconcileFailed)
		st.Conditions[0].Message = "Deploying: Error (see .status.usefulErrorMessage for details)"
		st.Fetch = fetchOK("")
		st.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: metav1.Now()}
		st.Deploy = &kappctrlv1alpha1.AppStatusDeploy{UpdatedAt: metav1.NewTime(time.Now().Add(time.Millisecond)), ExitCode: 1,
			Error: "Deploying: Error (see .status.usefulErrorMessage for details)", Stderr: stderr}
		st.UsefulErrorMessage = stderr
		st.ConsecutiveReconcileFailures = failures
	})
}

// appFetchFailed: vendir failed.
func appFetchFailed(ctx context.Context, name, stderr string) {
	setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
		st.Conditions = appCondition(kappctrlv1alpha1.ReconcileFailed)
		now := metav1.Now()
		st.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: now, UpdatedAt: metav1.NewTime(now.Add(time.Millisecond)), ExitCode: 1,
			Error: "Fetching resources: Error (see .status.usefulErrorMessage for details)", Stderr: stderr}
		st.UsefulErrorMessage = stderr
		st.ConsecutiveReconcileFailures = 1
	})
}
