package status

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }

func newBD(installed *metav1.Condition) *rukpakv1alpha2.BundleDeployment {
	bd := &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bd1", Generation: 2},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			InstallNamespace: "default", ProvisionerClassName: rukpakv1alpha2.ClassPlain,
			Source: rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "127.0.0.1:5000/bundles/plain:valid"}},
		},
	}
	if installed != nil {
		bd.Status.Conditions = []metav1.Condition{*installed}
	}
	return bd
}

type appState func(*kappctrlv1alpha1.App)

func newApp(gen, observed int64, condType kappctrlv1alpha1.ConditionType, mods ...appState) *kappctrlv1alpha1.App {
	app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Name: "bd1", Generation: gen, Annotations: map[string]string{rukpakv1alpha2.AnnotationBundleGeneration: "2"}}}
	app.Status.ObservedGeneration = observed
	if condType != "" {
		app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: condType, Status: corev1.ConditionTrue}}
	}
	for _, m := range mods {
		m(app)
	}
	return app
}

// madeFor marks the App as made from generation gen of the BundleDeployment.
func madeFor(gen int) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] = fmt.Sprint(gen)
	}
}

// failures is kapp-controller's count of failed runs in a row.
func failures(n int) appState {
	return func(a *kappctrlv1alpha1.App) { a.Status.ConsecutiveReconcileFailures = n }
}

func fetchOK(start, end int) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: at(start), UpdatedAt: at(end),
			Stdout: "Lock config\n\napiVersion: vendir.k14s.io/v1alpha1\ndirectories:\n- contents:\n  - image:\n      url: 127.0.0.1:5000/bundles/plain@" + digest + "\n    path: .\n  path: \"0\"\nkind: LockConfig\n"}
	}
}

func fetchFailed(start, end int, stderr string) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: at(start), UpdatedAt: at(end), ExitCode: 1, Error: "Fetching resources: Error (see .status.usefulErrorMessage for details)", Stderr: stderr}
		a.Status.UsefulErrorMessage = stderr
	}
}

func templateFailed(end int, stderr string) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Status.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: at(end), ExitCode: 1, Error: "Templating dir: Error (see .status.usefulErrorMessage for details)", Stderr: stderr}
		a.Status.UsefulErrorMessage = stderr
	}
}

func deployFailed(end int, stderr string) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{UpdatedAt: at(end), Finished: true, ExitCode: 1, Error: "Deploying: Error (see .status.usefulErrorMessage for details)", Stderr: stderr}
		a.Status.UsefulErrorMessage = stderr
	}
}

func c(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

// g is c as stored or computed for generation gen.
func g(gen int64, cond metav1.Condition) metav1.Condition {
	cond.ObservedGeneration = gen
	return cond
}

var (
	installedTrue = c("Installed", "True", "InstallationSucceeded", "Instantiated bundle bd1")
	unpackedTrue  = c("Unpacked", "True", "UnpackSuccessful", "Successfully unpacked the image Bundle")
	healthyTrue   = c("Healthy", "True", "Healthy", "BundleDeployment is healthy")
	healthyFalse  = c("Healthy", "False", "InstallationStatusFalse", "Installed condition is false")
	healthyWait   = c("Healthy", "Unknown", "InstallationStatusUnknown", "Waiting for the bundle to be installed")
	installWait   = c("Installed", "Unknown", "InstallPending", "Waiting for the bundle to be unpacked")
	templating    = c("Installed", "Unknown", "Installing", "kapp-controller is templating the bundle")
	applying      = c("Installed", "Unknown", "Installing", "kapp is applying the bundle")
	waitingReady  = c("Installed", "Unknown", "Installing", "kapp applied the bundle and is waiting for its objects to become ready")
	unpackWait    = c("Unpacked", "False", "UnpackPending", "Waiting for kapp-controller to pick up the App for this generation")
	unpacking     = c("Unpacked", "False", "Unpacking", "Fetching image 127.0.0.1:5000/bundles/plain:valid")
	pinnedSource  = &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "127.0.0.1:5000/bundles/plain@" + digest}}
	olderSource   = &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "127.0.0.1:5000/bundles/plain@sha256:" + strings.Repeat("e", 64)}}
)

// stored is what a BundleDeployment of generation 2 stored earlier.
type stored struct {
	conds    []metav1.Condition
	resolved *rukpakv1alpha2.BundleSource
}

// installedAt is the status of generation gen installed and healthy.
func installedAt(gen int64, resolved *rukpakv1alpha2.BundleSource) stored {
	return stored{conds: []metav1.Condition{g(gen, unpackedTrue), g(gen, installedTrue), g(gen, healthyTrue)}, resolved: resolved}
}

type want struct {
	unpacked, installed, healthy metav1.Condition
	resolved                     *rukpakv1alpha2.BundleSource
	hold                         bool
	writeAfter                   time.Duration
}

func TestCompute(t *testing.T) {
	t.Parallel()
	upgradeFailed := c("Installed", "False", "UpgradeFailed", "kapp: Error: timed out")
	canceledRun := want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "Unknown", "Installing",
		"kapp-controller runs the App again: an object kapp had applied was deleted or changed by someone other than kapp while kapp applied the bundle, "+
			"and the adapter canceled that run, which could not succeed")),
		healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay}
	tests := []struct {
		name   string
		stored stored
		app    *kappctrlv1alpha1.App
		facts  func(*Facts)
		want   want
	}{
		{
			name: "no app yet: progress is held for the delay",
			want: want{unpacked: g(2, unpackWait), installed: g(2, installWait), healthy: g(2, healthyWait), hold: true, writeAfter: ProgressDelay},
		},
		{
			name:  "no app yet, in progress past the delay: written",
			facts: inStep(ProgressDelay),
			want:  want{unpacked: g(2, unpackWait), installed: g(2, installWait), healthy: g(2, healthyWait)},
		},
		{
			name:   "progress shown, kapp-controller moved on: held for the delay",
			stored: stored{conds: []metav1.Condition{g(2, unpackWait), g(2, installWait), g(2, healthyWait)}},
			app:    newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, templating), healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay},
		},
		{
			name:   "progress shown before the adapter started, kapp-controller moved on, the delay passed: the step it reports is written",
			stored: stored{conds: []metav1.Condition{g(2, unpackWait), g(2, installWait), g(2, healthyWait)}},
			app:    newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			facts:  inStep(ProgressDelay),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, templating), healthy: g(2, healthyWait), resolved: pinnedSource},
		},
		{
			name:   "progress shown and unchanged: nothing to write, however long",
			stored: stored{conds: []metav1.Condition{g(2, unpackedTrue), g(2, templating), g(2, healthyWait)}, resolved: pinnedSource},
			app:    newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			facts: func(f *Facts) {
				inStep(time.Hour)(f)
				f.BD.Status.ObservedGeneration = 2
			},
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, templating), healthy: g(2, healthyWait), resolved: pinnedSource, hold: true},
		},
		{
			name: "stale App generation hides an old success",
			app:  newApp(3, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			want: want{unpacked: g(2, unpackWait), installed: g(2, installWait), healthy: g(2, healthyWait), hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "an App made for another generation does not speak for this one",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), madeFor(1)),
			want: want{unpacked: g(2, unpackWait), installed: g(2, installWait), healthy: g(2, healthyWait), hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "fetching",
			app: newApp(1, 1, kappctrlv1alpha1.Reconciling, func(a *kappctrlv1alpha1.App) {
				a.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: at(5), UpdatedAt: at(1)}
			}),
			want: want{unpacked: g(2, unpacking), installed: g(2, installWait), healthy: g(2, healthyWait), hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "templating after a fetch in this run",
			app:  newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, templating), healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "fetching again after an earlier run: the sub-statuses are that run's",
			app:  newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(1, 2), templateDone(3), deployDone(3, 5, "")),
			want: want{unpacked: g(2, unpacking), installed: g(2, installWait), healthy: g(2, healthyWait), hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "template done, kapp not yet started",
			app:  newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(10, 11), templateDone(12), deployDone(3, 5, "")),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, applying), healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay},
		},
		{
			name:  "kapp applying",
			app:   newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(10, 11), templateDone(12), deployRunning(12, 14, kappApplyingOut)),
			facts: inStep(ProgressDelay),
			want:  want{unpacked: g(2, unpackedTrue), installed: g(2, applying), healthy: g(2, healthyWait), resolved: pinnedSource},
		},
		{
			name:  "kapp waiting for readiness",
			app:   newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(10, 11), templateDone(12), deployRunning(12, 16, kappWaitingOut)),
			facts: inStep(ProgressDelay),
			want:  want{unpacked: g(2, unpackedTrue), installed: g(2, waitingReady), healthy: g(2, healthyWait), resolved: pinnedSource},
		},
		{
			name:  "kapp applying the next group of changes after waiting on the first",
			app:   newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(10, 11), templateDone(12), deployRunning(12, 18, kappWaitingOut+kappApplyingOut)),
			facts: inStep(ProgressDelay),
			want:  want{unpacked: g(2, unpackedTrue), installed: g(2, applying), healthy: g(2, healthyWait), resolved: pinnedSource},
		},
		{
			name:  "a rerun kapp-controller has not picked up: the status still reports the run before it",
			app:   newApp(2, 1, kappctrlv1alpha1.Reconciling, fetchOK(10, 11), templateDone(12), deployRunning(12, 16, kappWaitingOut), rerun(1, 20, RerunStalled)),
			facts: inStep(ProgressDelay),
			want:  want{unpacked: g(2, unpackedTrue), installed: g(2, waitingReady), healthy: g(2, healthyWait), resolved: pinnedSource},
		},
		{
			name: "a rerun kapp-controller picked up and lost: its last report, not a pickup pending",
			app:  newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(10, 11), templateDone(12), deployDone(12, 16, kappWaitingOut), rerun(1, 20, RerunStalled)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, installedTrue), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		{
			name: "a rerun followed by another spec change: the status speaks for neither",
			app:  newApp(3, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(10, 11), rerun(1, 20, RerunStalled)),
			want: want{unpacked: g(2, unpackWait), installed: g(2, installWait), healthy: g(2, healthyWait), hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "the old run's success while a rerun waits counts: the rerun changed only spec.paused",
			app:  newApp(2, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(10, 11), templateDone(12), deployDone(12, 16, kappWaitingOut), rerun(1, 20, RerunStalled)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, installedTrue), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		{
			name: "a run that failed while drift repair asked for another is not reported: the next run tells",
			app: newApp(2, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(10, 11), templateDone(12),
				deployFailed(60, "kapp: Error: create deployment/x (apps/v1) namespace: default: Getting resource deployment/x: not found"), failures(1), rerun(1, 20, RerunDrift)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "Unknown", "Installing",
				"kapp-controller runs the App again: an object kapp had applied was deleted or changed by someone other than kapp while kapp applied the bundle; "+
					"the run before ended with: kapp: Error: create deployment/x (apps/v1) namespace: default: Getting resource deployment/x: not found")),
				healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "a run drift repair canceled is not reported, at either of the two generations of its request",
			app: newApp(3, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(10, 11), templateDone(12),
				deployFailed(14, "kapp: Error: Process was canceled"), failures(1), rerun(1, 13, RerunCanceled)),
			want: canceledRun,
		},
		{
			name: "a run drift repair canceled is not reported once kapp-controller recorded the canceled generation, before the second write or after",
			app: newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(10, 11), templateDone(12),
				deployFailed(14, "kapp: Error: Process was canceled"), failures(1), rerun(1, 13, RerunCanceled)),
			want: canceledRun,
		},
		{
			name: "a run that failed while a stalled run's rerun waits is reported",
			app:  newApp(2, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(10, 11), templateFailed(40, "ytt: Error: boom"), failures(1), rerun(1, 20, RerunStalled)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "InstallFailed", "invalid bundle: ytt: Error: boom")),
				healthy: g(2, healthyFalse), resolved: pinnedSource},
		},
		{
			name: "succeeded",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, installedTrue), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		// The generation rule: an upgrade keeps saying what is installed
		// until kapp-controller deployed the new generation.
		{
			name:   "upgrade picked up: the installed generation stays, only Unpacked speaks for the new one",
			stored: installedAt(1, olderSource),
			app:    newApp(2, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			facts:  inStep(time.Minute),
			want:   want{unpacked: g(2, unpackWait), installed: g(1, installedTrue), healthy: g(1, healthyTrue), resolved: olderSource},
		},
		{
			name:   "upgrade fetched, deploy running: Installed=True stays at the old generation, with its source",
			stored: installedAt(1, olderSource),
			app:    newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			facts:  inStep(time.Minute),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(1, installedTrue), healthy: g(1, healthyTrue), resolved: olderSource},
		},
		{
			name:   "upgrade deployed: Installed moves to the new generation",
			stored: stored{conds: []metav1.Condition{g(2, unpackedTrue), g(1, installedTrue), g(1, healthyTrue)}, resolved: olderSource},
			app:    newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(5, 6)),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, installedTrue), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		{
			name:   "an upgrade's first deploy failure is reported at once, the installed source kept",
			stored: installedAt(1, olderSource),
			app:    newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: timed out"), failures(1)),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, upgradeFailed), healthy: g(2, healthyFalse), resolved: olderSource},
		},
		{
			name:   "an upgrade the CRD upgrade safety check refused: its words, without kapp's wrapping",
			stored: installedAt(1, olderSource),
			app: newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: update customresourcedefinition/gizmos.safety.example.com (apiextensions.k8s.io/v1) cluster:\n"+
				"  Updating resource customresourcedefinition/gizmos.safety.example.com (apiextensions.k8s.io/v1) cluster:\n    API server says:\n"+
				`      admission webhook "crd-upgrade-safety.core.rukpak.io" denied the request: failed to validate safety of UPDATE for CRD "gizmos.safety.example.com" (NOTE: ...): `+
				`validating upgrade for CRD "gizmos.safety.example.com" failed: version "v1", field "^.spec.color": field removed (NoExistingFieldRemoved); existing custom object default/precious failed validation against version "v1": spec.size:`+"\n        Required value (reason: Forbidden)"), failures(1)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "UpgradeFailed",
				"The CRD upgrade safety check refused kapp's update of a CRD, so kapp applied nothing of this bundle but, at most, its other CRDs, and the existing custom resources keep their data: "+
					`failed to validate safety of UPDATE for CRD "gizmos.safety.example.com" (NOTE: ...): validating upgrade for CRD "gizmos.safety.example.com" failed: version "v1", field "^.spec.color": field removed (NoExistingFieldRemoved); existing custom object default/precious failed validation against version "v1": spec.size: Required value`)),
				healthy: g(2, healthyFalse), resolved: olderSource},
		},
		{
			name:   "a failure after a failed upgrade is still the upgrade's",
			stored: stored{conds: []metav1.Condition{g(2, unpackedTrue), g(2, upgradeFailed), g(2, healthyFalse)}, resolved: olderSource},
			app:    newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(4, "ytt: Error: bad"), failures(3)),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "UpgradeFailed", "invalid bundle: ytt: Error: bad")), healthy: g(2, healthyFalse), resolved: olderSource},
		},
		{
			name: "kapp-controller's retry of a failed template step, read only once it began, says the failure",
			app: newApp(1, 1, kappctrlv1alpha1.Reconciling, specWritten(0), fetchOK(10, 11),
				templateFailed(4, "ytt: Error: bad"), failures(1)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "InstallFailed", "invalid bundle: ytt: Error: bad. kapp-controller is running it again")),
				healthy: g(2, healthyFalse), resolved: pinnedSource},
		},
		{
			name: "a retry not yet past its fetch says the failure too",
			app:  newApp(1, 1, kappctrlv1alpha1.Reconciling, specWritten(0), fetchOK(1, 2), templateFailed(3, "ytt: Error: bad"), failures(1)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "InstallFailed", "invalid bundle: ytt: Error: bad. kapp-controller is running it again")),
				healthy: g(2, healthyFalse), resolved: pinnedSource},
		},
		{
			name: "the run the adapter asked for during the failed step is the same content again",
			app: newApp(2, 2, kappctrlv1alpha1.Reconciling, specWritten(3), rerun(1, 3, RerunHeld), fetchOK(10, 11),
				templateFailed(4, "ytt: Error: bad"), failures(1)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "InstallFailed", "invalid bundle: ytt: Error: bad. kapp-controller is running it again")),
				healthy: g(2, healthyFalse), resolved: pinnedSource},
		},
		{
			name: "a spec written since the failure is a new run, not a retry",
			app:  newApp(2, 2, kappctrlv1alpha1.Reconciling, specWritten(5), fetchOK(10, 11), templateFailed(4, "ytt: Error: bad"), failures(1)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, templating), healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "a spec written in the failure's second may have followed it: a new run",
			app:  newApp(2, 2, kappctrlv1alpha1.Reconciling, specWritten(4), fetchOK(10, 11), templateFailed(4, "ytt: Error: bad"), failures(1)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, templating), healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay},
		},
		{
			name:   "a retry of the installed generation after one failure is a re-apply",
			stored: installedAt(2, pinnedSource),
			app:    newApp(2, 2, kappctrlv1alpha1.Reconciling, specWritten(0), fetchOK(10, 11), deployFailed(4, "kapp: Error: timed out"), failures(1)),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, installedTrue), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		{
			name:   "a retry of the installed generation after two failures keeps them said",
			stored: installedAt(2, pinnedSource),
			app:    newApp(2, 2, kappctrlv1alpha1.Reconciling, specWritten(0), fetchOK(10, 11), deployFailed(4, "kapp: Error: timed out"), failures(2)),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "UpgradeFailed", "kapp: Error: timed out. kapp-controller is running it again")),
				healthy: g(2, healthyFalse), resolved: pinnedSource},
		},
		{
			name:   "a status rukpak wrote (no condition generations) is an older install",
			stored: installedAt(0, olderSource),
			app:    newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			facts:  inStep(time.Minute),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(0, installedTrue), healthy: g(0, healthyTrue), resolved: olderSource},
		},
		{
			name:   "new content fetched by the adapter for the same generation is an upgrade",
			stored: installedAt(2, olderSource),
			app:    newApp(3, 3, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: timed out"), failures(1)),
			facts:  func(f *Facts) { f.Fetched = pinnedSource },
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, upgradeFailed), healthy: g(2, healthyFalse), resolved: olderSource},
		},
		// Re-applies of what is installed are not news.
		{
			name:   "re-applying the installed generation while fetching keeps it",
			stored: installedAt(2, pinnedSource),
			app: newApp(2, 2, kappctrlv1alpha1.Reconciling, func(a *kappctrlv1alpha1.App) {
				a.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: at(5), UpdatedAt: at(1)}
			}),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, installedTrue), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		{
			name:   "a re-apply of the installed generation that failed once waits for kapp-controller's retry",
			stored: installedAt(2, pinnedSource),
			app:    newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "Templating dir: waitid: no child processes"), failures(1)),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, installedTrue), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		{
			name:   "a re-apply of the installed generation that failed twice is reported",
			stored: installedAt(2, pinnedSource),
			app:    newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: timed out"), failures(2)),
			want:   want{unpacked: g(2, unpackedTrue), installed: g(2, upgradeFailed), healthy: g(2, healthyFalse), resolved: pinnedSource},
		},
		{
			name: "kapp-controller losing its own template process is not the bundle's failure",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "Templating dir: waitid: no child processes"), failures(1)),
			want: want{
				unpacked: g(2, unpackedTrue),
				installed: g(2, c("Installed", "False", "InstallFailed", "kapp-controller lost track of its own vendir or ytt process (a race in kapp-controller's sidecar, "+
					"not a problem of the bundle); kapp-controller retries the step after a short backoff: Templating dir: waitid: no child processes")),
				healthy: g(2, healthyFalse), resolved: pinnedSource,
			},
		},
		{
			name: "kapp-controller losing its own fetch process says so",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(5, 6, "Fetching resources: waitid: no child processes"), failures(1)),
			want: want{
				unpacked: g(2, c("Unpacked", "False", "UnpackFailed", "source bundle content: "+
					"kapp-controller lost track of its own vendir or ytt process (a race in kapp-controller's sidecar, "+
					"not a problem of the bundle); kapp-controller retries the step after a short backoff: Fetching resources: waitid: no child processes "+
					"(fetching image 127.0.0.1:5000/bundles/plain:valid)")),
				installed: g(2, installWait), healthy: g(2, healthyWait),
			},
		},
		{
			name: "fetch failed",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(5, 6, "vendir: Error: Syncing directory '0': MANIFEST_UNKNOWN: manifest unknown")),
			want: want{
				unpacked:  g(2, c("Unpacked", "False", "UnpackFailed", "source bundle content: vendir: Error: Syncing directory '0': MANIFEST_UNKNOWN: manifest unknown (fetching image 127.0.0.1:5000/bundles/plain:valid)")),
				installed: g(2, installWait), healthy: g(2, healthyWait),
			},
		},
		{
			name:   "an upgrade's fetch failure keeps the install and its source",
			stored: installedAt(1, olderSource),
			app:    newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, templateFailed(3, "old"), fetchFailed(5, 6, "unauthorized")),
			want: want{
				unpacked:  g(2, c("Unpacked", "False", "UnpackFailed", "source bundle content: unauthorized (fetching image 127.0.0.1:5000/bundles/plain:valid)")),
				installed: g(1, installedTrue), healthy: g(1, healthyTrue), resolved: olderSource,
			},
		},
		{
			name: "an image without files",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(5, 6, "vendir: Error: Syncing directory '0':\n  Filtering paths in directory '.':\n    Expected to find at least one file within directory")),
			want: want{
				unpacked:  g(2, c("Unpacked", "True", "UnpackSuccessful", "Unpacked the image Bundle; it holds no files")),
				installed: g(2, c("Installed", "False", "InstallFailed", "invalid bundle: found zero objects: plain+v0 bundles are required to contain at least one object")),
				healthy:   g(2, healthyFalse),
			},
		},
		{
			name: "no manifests directory",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "ytt: Error: Checking file '/tmp/kapp-controller-fetch-template-deploy123/manifests': lstat: no such file or directory")),
			want: want{
				unpacked:  g(2, unpackedTrue),
				installed: g(2, c("Installed", "False", "InstallFailed", "invalid bundle: readdir manifests: file does not exist: the bundle has no manifests/ directory (ytt: Error: Checking file '<tmp>': lstat: no such file or directory)")),
				healthy:   g(2, healthyFalse), resolved: pinnedSource,
			},
		},
		{
			name: "empty manifests directory",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "ytt: Error: Expected file mark '**/*:type=yaml-plain' to match at least one file by path, but did not")),
			want: want{
				unpacked:  g(2, unpackedTrue),
				installed: g(2, c("Installed", "False", "InstallFailed", "invalid bundle: found zero objects: plain+v0 bundles are required to contain at least one object")),
				healthy:   g(2, healthyFalse), resolved: pinnedSource,
			},
		},
		{
			name: "first deploy failed",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: no matches for kind \"OperatorGroup\" in version \"operators.coreos.com/v1\"")),
			want: want{
				unpacked:  g(2, unpackedTrue),
				installed: g(2, c("Installed", "False", "ErrorGettingReleaseState", "required resource not found, ensure CRDs are installed first: kapp: Error: no matches for kind \"OperatorGroup\" in version \"operators.coreos.com/v1\"")),
				healthy:   g(2, healthyFalse), resolved: pinnedSource,
			},
		},
		{
			name: "kapp finds no such kind",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: Expected to find kind 'operators.coreos.com/v1/OLMConfig', but did not")),
			want: want{
				unpacked:  g(2, unpackedTrue),
				installed: g(2, c("Installed", "False", "ErrorGettingReleaseState", "required resource not found, ensure CRDs are installed first: kapp: Error: Expected to find kind 'operators.coreos.com/v1/OLMConfig', but did not")),
				healthy:   g(2, healthyFalse), resolved: pinnedSource,
			},
		},
		{
			name:   "an upgrade to a bundle that names a missing API keeps the install: UpgradeFailed, in rukpak's words",
			stored: installedAt(1, olderSource),
			app:    newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: no matches for kind \"OperatorGroup\" in version \"operators.coreos.com/v1\"")),
			want: want{
				unpacked:  g(2, unpackedTrue),
				installed: g(2, c("Installed", "False", "UpgradeFailed", "required resource not found, ensure CRDs are installed first: kapp: Error: no matches for kind \"OperatorGroup\" in version \"operators.coreos.com/v1\"")),
				healthy:   g(2, healthyFalse), resolved: olderSource,
			},
		},
		{
			name: "a ConfigMap source that does not exist, in rukpak's words, then vendir's",
			app: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(5, 6, "vendir: Error: Syncing directory '0':\n  Syncing directory '.' with inline contents:\n    Fetching: configmaps \"non-exist\" not found"),
				func(a *kappctrlv1alpha1.App) { a.Namespace = "rukpak-apps-0" }),
			facts: func(f *Facts) {
				f.SystemNamespace = "rukpak-system"
				f.BD.Spec.Source = rukpakv1alpha2.BundleSource{Type: "configMaps", ConfigMaps: []rukpakv1alpha2.ConfigMapSource{{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "non-exist"}, Path: "manifests"}}}
			},
			want: want{
				unpacked: g(2, c("Unpacked", "False", "UnpackFailed", `source bundle content: get configmap rukpak-system/non-exist: ConfigMap "non-exist" not found; `+
					"kapp-controller: vendir: Error: Syncing directory '0':\n  Syncing directory '.' with inline contents:\n    Fetching: configmaps \"non-exist\" not found (fetching configMaps non-exist)")),
				installed: g(2, installWait), healthy: g(2, healthyWait),
			},
		},
		{
			name: "a missing ConfigMap is looked for in the App's namespace when the system namespace is not said",
			app: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(5, 6, `Fetching: configmaps "cm" not found`),
				func(a *kappctrlv1alpha1.App) { a.Namespace = "rukpak-system" }),
			facts: func(f *Facts) {
				f.BD.Spec.Source = rukpakv1alpha2.BundleSource{Type: "configMaps", ConfigMaps: []rukpakv1alpha2.ConfigMapSource{{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "cm"}}}}
			},
			want: want{
				unpacked:  g(2, c("Unpacked", "False", "UnpackFailed", `source bundle content: get configmap rukpak-system/cm: ConfigMap "cm" not found; kapp-controller: Fetching: configmaps "cm" not found (fetching configMaps cm)`)),
				installed: g(2, installWait), healthy: g(2, healthyWait),
			},
		},
		{
			name: "an image the adapter cannot fetch, in rukpak's words",
			facts: func(f *Facts) {
				f.Failure = &Failure{Kind: SourceFailed, Message: "error fetching image descriptor: GET https://r/v2/b/manifests/t: MANIFEST_UNKNOWN: manifest unknown", Retrying: true}
			},
			want: want{
				unpacked: g(2, c("Unpacked", "False", "UnpackFailed", "source bundle content: error fetching image descriptor: GET https://r/v2/b/manifests/t: MANIFEST_UNKNOWN: manifest unknown "+
					"(fetching image 127.0.0.1:5000/bundles/plain:valid); retrying with backoff")),
				installed: g(2, installWait), healthy: g(2, healthyWait),
			},
		},
		{
			name: "failure without any detail still says something",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, deployFailed(4, "")),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "InstallFailed", "kapp-controller reported a failure without details; see the App's status in the system namespace")), healthy: g(2, healthyFalse)},
		},
		// The adapter's own failures.
		{
			name: "a source the adapter cannot reach, retried at a time it names",
			facts: func(f *Facts) {
				f.Failure = &Failure{Kind: SourceFailed, Message: "dial tcp: connection refused", Retrying: true,
					NextAttempt: time.Date(2026, 12, 3, 17, 4, 5, 0, time.FixedZone("CET", 3600))}
			},
			want: want{
				unpacked: g(2, c("Unpacked", "False", "UnpackFailed", "source bundle content: dial tcp: connection refused (fetching image 127.0.0.1:5000/bundles/plain:valid); "+
					"retrying with backoff, next attempt at 2026-12-03T16:04:05Z")),
				installed: g(2, installWait), healthy: g(2, healthyWait),
			},
		},
		{
			name: "a source the adapter cannot reach, retried",
			facts: func(f *Facts) {
				f.Failure = &Failure{Kind: SourceFailed, Message: "dial tcp: connection refused", Retrying: true}
			},
			want: want{
				unpacked:  g(2, c("Unpacked", "False", "UnpackFailed", "source bundle content: dial tcp: connection refused (fetching image 127.0.0.1:5000/bundles/plain:valid); retrying with backoff")),
				installed: g(2, installWait), healthy: g(2, healthyWait),
			},
		},
		{
			name:   "an invalid bundle after an install is an upgrade failure, the install and its source kept",
			stored: installedAt(1, olderSource),
			facts: func(f *Facts) {
				f.Failure, f.Fetched = &Failure{Kind: BundleInvalid, Message: "readdir manifests: file does not exist"}, pinnedSource
			},
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "UpgradeFailed", "invalid bundle: readdir manifests: file does not exist")), healthy: g(2, healthyFalse), resolved: olderSource},
		},
		{
			name: "an unsupported spec",
			facts: func(f *Facts) {
				f.Failure = &Failure{Kind: SpecUnsupported, Message: `source type "upload" is not supported yet`}
			},
			want: want{
				unpacked:  g(2, c("Unpacked", "False", "UnpackFailed", `source type "upload" is not supported yet`)),
				installed: g(2, c("Installed", "False", "InstallFailed", `The bundle cannot be installed: source type "upload" is not supported yet`)),
				healthy:   g(2, healthyFalse),
			},
		},
		{
			name:   "an App the adapter cannot write is visible",
			stored: installedAt(1, olderSource),
			facts: func(f *Facts) {
				f.Failure = &Failure{Kind: ControllerFailed, Message: `apply App rukpak-system/bd1: admission webhook "x" denied the request`, Retrying: true}
			},
			want: want{
				unpacked:  g(2, c("Unpacked", "False", "UnpackPending", "Waiting for the App to be written")),
				installed: g(2, c("Installed", "False", "UpgradeFailed", `apply App rukpak-system/bd1: admission webhook "x" denied the request; retrying with backoff`)),
				healthy:   g(2, healthyFalse), resolved: olderSource,
			},
		},
		{
			name:  "a failed prune does not hide a successful install",
			app:   newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			facts: func(f *Facts) { f.PruneFailure = "delete content secret x: forbidden" },
			want: want{
				unpacked: g(2, unpackedTrue),
				installed: g(2, c("Installed", "True", "InstallationSucceeded",
					"Instantiated bundle bd1. Removing content Secrets the App no longer reads failed, the adapter retries: delete content secret x: forbidden")),
				healthy: g(2, healthyTrue), resolved: pinnedSource,
			},
		},
		{
			name:  "installed objects that cannot be read leave Healthy unknown, saying why",
			app:   newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			facts: func(f *Facts) { f.InstalledFailure = "list installed workloads: timed out" },
			want: want{
				unpacked: g(2, unpackedTrue), installed: g(2, installedTrue), resolved: pinnedSource,
				healthy: g(2, c("Healthy", "Unknown", "HealthCheckFailed", "Reading the installed objects failed, the adapter retries: list installed workloads: timed out")),
			},
		},
		{
			name:   "a Failed object of the installed generation during an upgrade is news",
			stored: installedAt(1, olderSource),
			app:    newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			facts: func(f *Facts) {
				f.Installed = &Installed{Objects: []unstructured.Unstructured{obj(t, pastDeadline), obj(t, lostPods)}}
			},
			want: want{
				unpacked: g(2, unpackedTrue), installed: g(1, installedTrue), resolved: olderSource,
				healthy: g(1, c("Healthy", "False", "ObjectFailed", "2 of the 2 installed objects judged are not Current (1 Failed, 1 InProgress): "+
					"Deployment ns/api is Failed: Progress deadline exceeded; Deployment ns/web is InProgress: Available: 0/2")),
			},
		},
		{
			// kapp waits for what its run changes: a rollout is not news.
			name:   "an object in progress while the App deploys is kapp's to wait for",
			stored: installedAt(1, olderSource),
			app:    newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			facts: func(f *Facts) {
				f.Installed = &Installed{Objects: []unstructured.Unstructured{obj(t, lostPods)}}
			},
			// Work under way, written after the progress delay.
			want: want{unpacked: g(2, unpackedTrue), installed: g(1, installedTrue), resolved: olderSource, healthy: g(1, healthyTrue), hold: true, writeAfter: ProgressDelay},
		},
		{
			name: "what was said before the App's run stays said during it",
			stored: func() stored {
				st := installedAt(1, olderSource)
				st.conds[2] = g(1, c("Healthy", "False", "Unhealthy", "1 of the 1 installed objects judged is not Current (1 InProgress): Deployment ns/web is InProgress: Available: 0/2"))
				return st
			}(),
			app: newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			facts: func(f *Facts) {
				f.Installed = &Installed{Objects: []unstructured.Unstructured{obj(t, lostPods)}}
			},
			want: want{
				unpacked: g(2, unpackedTrue), installed: g(1, installedTrue), resolved: olderSource,
				healthy: g(1, c("Healthy", "False", "Unhealthy", "1 of the 1 installed objects judged is not Current (1 InProgress): Deployment ns/web is InProgress: Available: 0/2")),
			},
		},
		{
			name: "deleting",
			app:  newApp(1, 1, kappctrlv1alpha1.Deleting),
			want: want{unpacked: g(2, c("Unpacked", "Unknown", "Deleting", "Removing the objects this BundleDeployment installed")), installed: g(2, c("Installed", "False", "Deleting", "Removing the objects this BundleDeployment installed")), healthy: g(2, healthyFalse)},
		},
		{
			name: "delete failed",
			app: newApp(1, 1, kappctrlv1alpha1.DeleteFailed, func(a *kappctrlv1alpha1.App) {
				a.Status.Conditions[0].Message = "Preparing kapp: Getting service account: serviceaccounts \"installer\" not found"
			}),
			want: want{
				unpacked:  g(2, c("Unpacked", "Unknown", "DeleteFailed", "Removing the installed objects failed: Preparing kapp: Getting service account: serviceaccounts \"installer\" not found")),
				installed: g(2, c("Installed", "False", "DeleteFailed", "Removing the installed objects failed: Preparing kapp: Getting service account: serviceaccounts \"installer\" not found")),
				healthy:   g(2, healthyFalse),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bd := newBD(nil)
			bd.Status.Conditions, bd.Status.ResolvedSource = tt.stored.conds, tt.stored.resolved
			f := Facts{BD: bd, App: tt.app, Now: t0.Add(time.Hour)}
			if tt.facts != nil {
				tt.facts(&f)
			}
			out := Compute(f)
			checkOutcome(t, out, tt.want)
		})
	}
}

// inStep sets the facts of work under way whose progress has not been said
// and has been behind the stored status for d.
func inStep(d time.Duration) func(*Facts) {
	return func(f *Facts) { f.Progress = Progress{BehindSince: f.Now.Add(-d)} }
}

func checkOutcome(t *testing.T, out Computed, w want) {
	t.Helper()
	var got []metav1.Condition
	for _, typ := range []string{"Unpacked", "Installed", "Healthy"} {
		cond := apimeta.FindStatusCondition(out.Status.Conditions, typ)
		if cond == nil {
			t.Fatalf("no %s condition", typ)
		}
		cc := *cond
		cc.LastTransitionTime = metav1.Time{}
		if cc.Message == "" || strings.Contains(cc.Message, "<nil>") {
			t.Errorf("condition %s has an unusable message %q", cc.Type, cc.Message)
		}
		got = append(got, cc)
	}
	if d := cmp.Diff([]metav1.Condition{w.unpacked, w.installed, w.healthy}, got); d != "" {
		t.Errorf("conditions (-want +got):\n%s", d)
	}
	if d := cmp.Diff(w.resolved, out.Status.ResolvedSource); d != "" {
		t.Errorf("resolvedSource (-want +got):\n%s", d)
	}
	if out.Status.ObservedGeneration != w.installed.ObservedGeneration {
		t.Errorf("status.observedGeneration = %d, want Installed's %d", out.Status.ObservedGeneration, w.installed.ObservedGeneration)
	}
	if out.Hold != w.hold || out.WriteAfter != w.writeAfter {
		t.Errorf("hold = %v after %v, want %v after %v", out.Hold, out.WriteAfter, w.hold, w.writeAfter)
	}
}

// A periodic re-apply of what is installed must leave the stored status as
// it is: no flapping, and no status write at rest.
func TestCompute_ReapplyKeepsStoredStatus(t *testing.T) {
	t.Parallel()
	bd := newBD(nil)
	done := Compute(Facts{BD: bd, App: newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)), Now: t0})
	bd.Status = done.Status
	for _, app := range []*kappctrlv1alpha1.App{
		newApp(2, 2, kappctrlv1alpha1.Reconciling),
		newApp(3, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
		newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
		newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(5, 6)),
		// kapp-controller v0.53.1 loses a ytt process now and then, and retries.
		newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(5, 6), templateFailed(7, "Templating dir: waitid: no child processes"), failures(1)),
	} {
		got := Compute(Facts{BD: bd, App: app, Now: t0.Add(time.Hour)})
		if d := cmp.Diff(done.Status, got.Status); d != "" {
			t.Errorf("App %s: status changed on a re-apply (-stored +got):\n%s", app.Status.Conditions[0].Type, d)
		}
		if got.Hold {
			t.Errorf("App %s: a re-apply counts as progress", app.Status.Conditions[0].Type)
		}
	}
}

// Walking an upgrade through every App state the real kapp-controller
// passes, Installed=True never carries the new generation before the App
// reports the new spec deployed.
func TestCompute_UpgradeNeverClaimedEarly(t *testing.T) {
	t.Parallel()
	bd := newBD(nil)
	bd.Generation = 1
	bd.Status = Compute(Facts{BD: bd, App: newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), madeFor(1)), Now: t0}).Status
	bd.Generation = 2
	for i, app := range []*kappctrlv1alpha1.App{
		// A stale App from the informer cache, made for generation 1.
		newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), madeFor(1)),
		newApp(2, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
		newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(1, 2)),
		newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(10, 12)),
	} {
		out := Compute(Facts{BD: bd, App: app, Now: t0.Add(time.Duration(i) * time.Minute), Progress: Progress{BehindSince: t0}})
		if !out.Hold {
			bd.Status = out.Status
		}
		inst := apimeta.FindStatusCondition(bd.Status.Conditions, "Installed")
		if inst.Status == metav1.ConditionTrue && inst.ObservedGeneration == 2 {
			t.Fatalf("step %d: Installed=True claimed for generation 2 before the App deployed it", i)
		}
		if bd.Status.ObservedGeneration == 2 {
			t.Fatalf("step %d: status.observedGeneration 2 before the outcome", i)
		}
	}
	out := Compute(Facts{BD: bd, App: newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(10, 12)), Now: t0.Add(time.Hour)})
	if inst := apimeta.FindStatusCondition(out.Status.Conditions, "Installed"); inst.ObservedGeneration != 2 || inst.Status != metav1.ConditionTrue {
		t.Fatalf("after the deploy: %+v", inst)
	}
}

// deployDone is a deploy kapp finished; deployRunning one under way, as
// kapp-controller writes it every 2 s.
func deployDone(start, end int, stdout string) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: at(start), UpdatedAt: at(end), Finished: true, Stdout: stdout}
	}
}

func deployRunning(start, end int, stdout string) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: at(start), UpdatedAt: at(end), Stdout: stdout}
	}
}

// specWritten is the App's spec last written (by the adapter) at second s.
func specWritten(s int) appState {
	return func(a *kappctrlv1alpha1.App) {
		when := at(s)
		a.ManagedFields = append(a.ManagedFields, metav1.ManagedFieldsEntry{Manager: "rukpak-kapp", Operation: metav1.ManagedFieldsOperationApply, Time: &when},
			metav1.ManagedFieldsEntry{Manager: "kapp-controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: ptrTime(at(s + 50))})
	}
}

// rerun is the adapter's request for another run, made at generation gen.
func rerun(gen int64, when int, why string) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Annotations[rukpakv1alpha2.AnnotationRerun] = Rerun{Generation: gen, At: at(when).Time, Why: why}.String()
	}
}

// kapp's output as kapp-controller records it while kapp runs.
const (
	kappApplyingOut = "Changes\n\nNamespace  Name  Kind\ndefault    x     Deployment\n\n" +
		"12:00:00PM: ---- applying 1 changes [0/1 done] ----\n12:00:00PM: create deployment/x (apps/v1) namespace: default\n"
	kappWaitingOut = kappApplyingOut + "12:00:01PM: ---- waiting on 1 changes [0/1 done] ----\n12:00:03PM: ongoing: reconcile deployment/x (apps/v1) namespace: default\n"
)

func templateDone(end int) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Status.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: at(end)}
	}
}

func TestCompute_TemplateDeadline(t *testing.T) {
	t.Parallel()
	const limit = time.Minute // the request for another run goes 30 s into the step
	reconciling := kappctrlv1alpha1.Reconciling
	// probed is the template step under way since 12 s, and the request for
	// another run made at second when, not picked up, for why.
	probed := func(when int, why string, mods ...appState) *kappctrlv1alpha1.App {
		return newApp(3, 2, reconciling, append([]appState{fetchOK(10, 12), templateDone(3), rerun(2, when, why)}, mods...)...)
	}
	tests := []struct {
		name     string
		app      *kappctrlv1alpha1.App
		now      int
		limit    time.Duration
		late     bool
		wantLeft time.Duration
	}{
		{"no App yet", nil, 100, limit, false, 0},
		{"still fetching", newApp(2, 2, reconciling, func(a *kappctrlv1alpha1.App) {
			a.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: at(10), UpdatedAt: at(5)}
		}), 100, limit, false, 0},
		{"template running, within the limit", newApp(2, 2, reconciling, fetchOK(10, 12), templateDone(3)), 42, limit, false, 30 * time.Second},
		{"first run, template running, within the limit", newApp(2, 2, reconciling, fetchOK(10, 12)), 12, limit, false, time.Minute},
		// Nothing says the step still runs: kapp-controller may have lost
		// the run (killed, or its write of the step's end refused).
		{"past the limit, no rerun asked: not reported", newApp(2, 2, reconciling, fetchOK(10, 12), templateDone(3)), 72, limit, false, 0},
		{"past the limit, the rerun asked 30 s into the step waits: not yet held", probed(42, RerunStalled), 72, limit, false, 0},
		{"past the limit, the rerun held: reported", probed(42, RerunHeld), 72, limit, true, 0},
		{"held, but not yet past the limit", probed(42, RerunHeld), 70, limit, false, 2 * time.Second},
		{"a rerun asked before this step began does not count", probed(11, RerunHeld), 500, limit, false, 0},
		{"the rerun was picked up: the new run's own fetch is under way", newApp(3, 3, reconciling, fetchOK(10, 12), templateDone(3), rerun(2, 42, RerunHeld)),
			500, limit, false, 0},
		{"the step ended while the rerun waits", probed(42, RerunHeld, templateDone(80)), 500, limit, false, 0},
		{"template done, deploy running", newApp(2, 2, reconciling, fetchOK(10, 12), templateDone(12)), 500, limit, false, 0},
		{"run finished", newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(10, 12), templateDone(3)), 500, limit, false, 0},
		{"older generation", newApp(3, 2, reconciling, fetchOK(10, 12)), 500, limit, false, 0},
		{"fetch failed", newApp(2, 2, reconciling, fetchFailed(10, 12, "boom")), 500, limit, false, 0},
		{"deadline off", newApp(2, 2, reconciling, fetchOK(10, 12)), 500, 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := Compute(Facts{BD: newBD(nil), App: tt.app, Now: at(tt.now).Time, TemplateTimeout: tt.limit})
			if out.LookAgainAfter != tt.wantLeft {
				t.Errorf("time left = %v, want %v", out.LookAgainAfter, tt.wantLeft)
			}
			inst := apimeta.FindStatusCondition(out.Status.Conditions, "Installed")
			if late := inst.Reason == "InstallFailed"; late != tt.late {
				t.Fatalf("late = %v, want %v: %+v", late, tt.late, inst)
			}
			if tt.late {
				for _, want := range []string{"more than 1m0s", "left the run the adapter asked for during the step waiting", "billion laughs"} {
					if !strings.Contains(inst.Message, want) {
						t.Errorf("message %q lacks %q", inst.Message, want)
					}
				}
			}
		})
	}
}

func TestTemplateProbeAfter(t *testing.T) {
	t.Parallel()
	for limit, want := range map[time.Duration]time.Duration{
		10 * time.Second: 5 * time.Second, 2 * time.Minute: StepQuiet, time.Minute: StepQuiet, 0: 0,
	} {
		if got := TemplateProbeAfter(limit); got != want {
			t.Errorf("TemplateProbeAfter(%v) = %v, want %v", limit, got, want)
		}
	}
}

// Computing the same facts over the stored result writes nothing: the
// status converges in one write.
func TestCompute_Idempotent(t *testing.T) {
	t.Parallel()
	for _, app := range []*kappctrlv1alpha1.App{
		newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
		newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, strings.Repeat("é", 3000))),
		newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(1, 2, "vendir: Error: Get \"https://user:secret@example.com/b.tgz?token=abc\": 401")),
	} {
		bd := newBD(nil)
		first := Compute(Facts{BD: bd, App: app, Now: t0})
		bd.Status = first.Status
		again := Compute(Facts{BD: bd, App: app, Now: t0.Add(time.Minute)})
		if d := cmp.Diff(first.Status, again.Status); d != "" {
			t.Errorf("a second computation changed the status (-first +again):\n%s", d)
		}
	}
}
func TestMessage_StableAndBounded(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"10:01:02AM: kapp failed in /tmp/kapp-controller-fetch-template-deploy111/0", "11:21:32PM: kapp failed in /tmp/kapp-controller-fetch-template-deploy999/0"},
		{"ytt: Error: Checking file '/etc/kappctrl-mem-tmp/kapp-controller-fetch-template-deploy1734742617/0/manifests': lstat x",
			"ytt: Error: Checking file '/etc/kappctrl-mem-tmp/kapp-controller-fetch-template-deploy42/0/manifests': lstat x"},
		{"vendir: Error: open /tmp/vendir-123/x: denied", "vendir: Error: open /tmp/vendir-987/x: denied"},
	} {
		a, b := Message(pair[0]), Message(pair[1])
		if a != b || strings.Contains(a, "deploy") {
			t.Errorf("same cause gave different or unstripped messages: %q vs %q", a, b)
		}
	}
	long := Message(strings.Repeat("x", 10000) + "THE END")
	if len(long) > maxMessage+10 || !strings.HasSuffix(long, "THE END") {
		t.Errorf("long message not trimmed to its tail: len %d", len(long))
	}
	if got := Message("", "<nil>", "  "); got == "" || strings.Contains(got, "<nil>") {
		t.Errorf("empty candidates gave %q", got)
	}
}

func TestOutOfMemory(t *testing.T) {
	t.Parallel()
	dump := "ytt: Error: \nruntime: out of memory: cannot allocate 4194304-byte block (1878753280 in use)\nfatal error: out of memory\n\ngoroutine 1 [running]:\nruntime.throw(...)\n"
	for _, tt := range []struct {
		name, detail, want string
	}{
		{"go runtime", dump, "(runtime: out of memory: cannot allocate 4194304-byte block (1878753280 in use));"},
		{"go runtime refused address space (seen alongside stress-ng)", "fatal error: runtime: cannot allocate memory\nfatal error: runtime: cannot allocate memory\ngoroutine 17 gp=0x39546949c000 m=2 [running]:\nruntime.throw({0xa869f1?, 0x39546949c000?})\n",
			"(fatal error: runtime: cannot allocate memory);"},
		{"kernel", "Templating dir: signal: killed", "(Templating dir: signal: killed);"},
		{"other failure", "ytt: Error: Unmarshaling YAML template 'a.yaml'", ""},
	} {
		got, ok := outOfMemory(tt.detail)
		if ok != (tt.want != "") || !strings.Contains(got, tt.want) || (ok && !strings.Contains(got, "billion laughs")) {
			t.Errorf("%s: outOfMemory() = %q, %v; want one containing %q", tt.name, got, ok, tt.want)
		}
		if ok && strings.Contains(got, "goroutine") {
			t.Errorf("%s: the goroutine dump leaked into %q", tt.name, got)
		}
	}
}

// A cut inside a multibyte character would be stored as U+FFFD and never
// equal the computed message again: a status patch on every reconcile.
func TestMessage_CutsOnCharacterBoundaries(t *testing.T) {
	t.Parallel()
	for shift := 0; shift < 4; shift++ {
		msg := strings.Repeat("x", shift) + strings.Repeat("日本語é", 400)
		got := Message(msg)
		if !utf8.ValidString(got) {
			t.Fatalf("shift %d: cut splits a character: %q", shift, got[len(got)-8:])
		}
		if len(got) > maxMessage+16 {
			t.Errorf("shift %d: %d bytes", shift, len(got))
		}
		if Message(got) != got {
			t.Errorf("shift %d: not stable when cleaned again", shift)
		}
	}
	if got := Message("bad \xff byte"); !utf8.ValidString(got) {
		t.Errorf("invalid UTF-8 kept: %q", got)
	}
}

// Shorten bounds in bytes, as the API server does (an Event's note at
// 1024), and never splits a character.
func TestShorten(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{3, 64, 1024} {
		for shift := 0; shift < 4; shift++ {
			in := strings.Repeat("x", shift) + strings.Repeat("拒否é", 300) + "cause"
			got := Shorten(in, limit)
			if len(got) > limit {
				t.Errorf("limit %d, shift %d: %d bytes", limit, shift, len(got))
			}
			if !utf8.ValidString(got) {
				t.Errorf("limit %d, shift %d: cut splits a character", limit, shift)
			}
			if limit > 16 && !strings.HasSuffix(got, "cause") {
				t.Errorf("limit %d, shift %d: the end is lost: %q", limit, shift, got[len(got)-8:])
			}
		}
	}
	if got := Shorten("short", 1024); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`Get "https://user:s3cret@example.com/b.tgz": 401`, `Get "https://***@example.com/b.tgz": 401`},
		{"git clone https://ghp_token@github.com/o/r.git failed", "git clone https://***@github.com/o/r.git failed"},
		{"fetch https://b.s3.amazonaws.com/x.tgz?X-Amz-Signature=abc&X-Amz-Credential=id&part=1 failed",
			"fetch https://b.s3.amazonaws.com/x.tgz?X-Amz-Credential=***&X-Amz-Signature=***&part=1 failed"},
		{"https://h/x?token=abc", "https://h/x?token=***"},
		{"https://blob.core.windows.net/c/b.tgz?sv=2020&sig=zzz", "https://blob.core.windows.net/c/b.tgz?sig=***&sv=2020"},
		{"nothing to hide in https://example.com/a/b?ref=main", "nothing to hide in https://example.com/a/b?ref=main"},
		{"ssh://git@host:22/repo", "ssh://***@host:22/repo"},
		{"no url here", "no url here"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	bd := newBD(nil)
	bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "http", HTTP: &rukpakv1alpha2.HTTPSource{URL: "https://u:p@files.example.com/b.tgz?token=t"}}
	out := Compute(Facts{BD: bd, Failure: &Failure{Kind: SourceFailed, Message: `Get "https://u:p@files.example.com/b.tgz?token=t": EOF`}, Now: t0})
	for _, c := range out.Status.Conditions {
		if strings.Contains(c.Message, "u:p") || strings.Contains(c.Message, "token=t") {
			t.Errorf("condition %s leaks a credential: %q", c.Type, c.Message)
		}
	}
}

func TestCompute_NotPickedUp(t *testing.T) {
	t.Parallel()
	const limit = 2 * time.Minute
	// written is an App of generation 3 the adapter applied at second s,
	// which kapp-controller has not picked up (it observed generation 2).
	written := func(s int) *kappctrlv1alpha1.App {
		return newApp(3, 2, "", madeFor(2), func(a *kappctrlv1alpha1.App) {
			a.Namespace = "rukpak-system"
			a.CreationTimestamp = at(0)
			when := at(s)
			a.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kapp-controller", Time: ptrTime(at(s + 50))}, {Manager: "rukpak-kapp", Operation: metav1.ManagedFieldsOperationApply, Time: &when}}
		})
	}
	for _, tt := range []struct {
		name     string
		app      *kappctrlv1alpha1.App
		now      int
		limit    time.Duration
		escalate bool
		left     time.Duration
	}{
		{"just written: waiting, looked at again at the bound", written(100), 110, limit, false, 110 * time.Second},
		{"past the bound since the adapter's last write", written(100), 221, limit, true, 0},
		{"kapp-controller's own writes do not count as the adapter's", written(100), 230, limit, true, 0},
		{"picked up", newApp(3, 3, kappctrlv1alpha1.Reconciling, madeFor(2)), 500, limit, false, 0},
		{"no bound", written(100), 500, 0, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := Compute(Facts{BD: newBD(nil), App: tt.app, Now: at(tt.now).Time, TemplateTimeout: tt.limit})
			u := apimeta.FindStatusCondition(out.Status.Conditions, rukpakv1alpha2.TypeUnpacked)
			if u == nil || (tt.app.Status.ObservedGeneration != tt.app.Generation) != (u.Reason == rukpakv1alpha2.ReasonUnpackPending) {
				t.Fatalf("Unpacked = %+v, want UnpackPending exactly while the App is not picked up", u)
			}
			escalated := strings.Contains(u.Message, "check that kapp-controller runs (v0.53.1 or newer), that it watches namespace rukpak-system")
			if escalated != tt.escalate {
				t.Errorf("message %q: escalated %v, want %v", u.Message, escalated, tt.escalate)
			}
			if tt.left != 0 && out.LookAgainAfter != tt.left {
				t.Errorf("LookAgainAfter = %v, want %v", out.LookAgainAfter, tt.left)
			}
		})
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }
