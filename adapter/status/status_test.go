package status

import (
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Name: "bd1", Generation: gen}}
	app.Status.ObservedGeneration = observed
	if condType != "" {
		app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: condType, Status: corev1.ConditionTrue}}
	}
	for _, m := range mods {
		m(app)
	}
	return app
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
		a.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{UpdatedAt: at(end), ExitCode: 1, Error: "Deploying: Error (see .status.usefulErrorMessage for details)", Stderr: stderr}
		a.Status.UsefulErrorMessage = stderr
	}
}

func c(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

var (
	installedTrue = c("Installed", "True", "InstallationSucceeded", "Instantiated bundle bd1")
	unpackedTrue  = c("Unpacked", "True", "UnpackSuccessful", "Successfully unpacked the image Bundle")
	healthyTrue   = c("Healthy", "True", "Healthy", "BundleDeployment is healthy")
	healthyFalse  = c("Healthy", "False", "InstallationStatusFalse", "Installed condition is false")
	healthyWait   = c("Healthy", "Unknown", "InstallationStatusUnknown", "Waiting for the bundle to be installed")
	installWait   = c("Installed", "Unknown", "InstallPending", "Waiting for the bundle to be unpacked")
	// installedNow is installedTrue as stored for the BundleDeployment's
	// current generation (2).
	installedNow = func() metav1.Condition { c := installedTrue; c.ObservedGeneration = 2; return c }()
	pinnedSource = &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "127.0.0.1:5000/bundles/plain@" + digest}}
)

func TestFromApp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		installed *metav1.Condition
		app       *kappctrlv1alpha1.App
		want      Result
	}{
		{
			name: "no app yet",
			want: Result{Unpacked: c("Unpacked", "False", "UnpackPending", "Waiting for kapp-controller to pick up the App for this generation"), Installed: installWait, Healthy: healthyWait},
		},
		{
			name: "stale generation hides an old success",
			app:  newApp(3, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			want: Result{Unpacked: c("Unpacked", "False", "UnpackPending", "Waiting for kapp-controller to pick up the App for this generation"), Installed: installWait, Healthy: healthyWait},
		},
		{
			name: "fetching",
			app: newApp(1, 1, kappctrlv1alpha1.Reconciling, func(a *kappctrlv1alpha1.App) {
				a.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: at(5), UpdatedAt: at(1)}
			}),
			want: Result{Unpacked: c("Unpacked", "False", "Unpacking", "Fetching image 127.0.0.1:5000/bundles/plain:valid"), Installed: installWait, Healthy: healthyWait},
		},
		{
			name: "deploying after a fetch in this run",
			app:  newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			want: Result{Unpacked: unpackedTrue, Installed: c("Installed", "Unknown", "Installing", "kapp is applying the bundle and waiting for its objects to become ready"), Healthy: healthyWait, ResolvedSource: pinnedSource},
		},
		{
			name:      "redeploying keeps an earlier install visible",
			installed: &installedTrue,
			app:       newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			want:      Result{Unpacked: unpackedTrue, Installed: installedTrue, Healthy: healthyWait, ResolvedSource: pinnedSource},
		},
		{
			name:      "re-applying the installed generation while fetching keeps it",
			installed: &installedNow,
			app: newApp(2, 2, kappctrlv1alpha1.Reconciling, func(a *kappctrlv1alpha1.App) {
				a.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: at(5), UpdatedAt: at(1)}
			}),
			want: Result{Unpacked: unpackedTrue, Installed: installedTrue, Healthy: healthyTrue},
		},
		{
			name:      "re-applying the installed generation while deploying keeps it",
			installed: &installedNow,
			app:       newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
			want:      Result{Unpacked: unpackedTrue, Installed: installedTrue, Healthy: healthyTrue},
		},
		{
			name:      "a re-apply of the installed generation that failed once waits for kapp-controller's retry",
			installed: &installedNow,
			app: newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "Templating dir: waitid: no child processes"),
				failures(1)),
			want: Result{Unpacked: unpackedTrue, Installed: installedTrue, Healthy: healthyTrue},
		},
		{
			name:      "a re-apply of the installed generation that failed twice is reported",
			installed: &installedNow,
			app:       newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: timed out"), failures(2)),
			want:      Result{Unpacked: unpackedTrue, Installed: c("Installed", "False", "UpgradeFailed", "kapp: Error: timed out"), Healthy: healthyFalse, ResolvedSource: pinnedSource},
		},
		{
			name: "kapp-controller losing its own template process is not the bundle's failure",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "Templating dir: waitid: no child processes"), failures(1)),
			want: Result{
				Unpacked: unpackedTrue,
				Installed: c("Installed", "False", "InstallFailed", "kapp-controller lost track of its own vendir or ytt process (a race in kapp-controller's sidecar, "+
					"not a problem of the bundle); kapp-controller retries the step after a short backoff: Templating dir: waitid: no child processes"),
				Healthy:        healthyFalse,
				ResolvedSource: pinnedSource,
			},
		},
		{
			name: "kapp-controller losing its own fetch process says so",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(5, 6, "Fetching resources: waitid: no child processes"), failures(1)),
			want: Result{
				Unpacked: c("Unpacked", "False", "UnpackFailed", "source bundle content: fetch image 127.0.0.1:5000/bundles/plain:valid: "+
					"kapp-controller lost track of its own vendir or ytt process (a race in kapp-controller's sidecar, "+
					"not a problem of the bundle); kapp-controller retries the step after a short backoff: Fetching resources: waitid: no child processes"),
				Installed: installWait, Healthy: healthyWait,
			},
		},
		{
			name: "succeeded",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			want: Result{Unpacked: unpackedTrue, Installed: installedTrue, Healthy: healthyTrue, ResolvedSource: pinnedSource},
		},
		{
			name: "fetch failed",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(5, 6, "vendir: Error: Syncing directory '0': MANIFEST_UNKNOWN: manifest unknown")),
			want: Result{
				Unpacked:  c("Unpacked", "False", "UnpackFailed", "source bundle content: fetch image 127.0.0.1:5000/bundles/plain:valid: vendir: Error: Syncing directory '0': MANIFEST_UNKNOWN: manifest unknown"),
				Installed: installWait, Healthy: healthyWait,
			},
		},
		{
			name: "fetch failed after an older template failure",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, templateFailed(3, "old"), fetchFailed(5, 6, "unauthorized")),
			want: Result{
				Unpacked:  c("Unpacked", "False", "UnpackFailed", "source bundle content: fetch image 127.0.0.1:5000/bundles/plain:valid: unauthorized"),
				Installed: installWait, Healthy: healthyWait,
			},
		},
		{
			name: "an image without files",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(5, 6, "vendir: Error: Syncing directory '0':\n  Filtering paths in directory '.':\n    Expected to find at least one file within directory")),
			want: Result{
				Unpacked:  c("Unpacked", "True", "UnpackSuccessful", "Unpacked the image Bundle; it holds no files"),
				Installed: c("Installed", "False", "InstallFailed", "invalid bundle: found zero objects: plain+v0 bundles are required to contain at least one object"),
				Healthy:   healthyFalse,
			},
		},
		{
			name: "no manifests directory",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "ytt: Error: Checking file '/tmp/kapp-controller-fetch-template-deploy123/manifests': lstat: no such file or directory")),
			want: Result{
				Unpacked:       unpackedTrue,
				Installed:      c("Installed", "False", "InstallFailed", "invalid bundle: readdir manifests: file does not exist: the bundle has no manifests/ directory (ytt: Error: Checking file '<tmp>': lstat: no such file or directory)"),
				Healthy:        healthyFalse,
				ResolvedSource: pinnedSource,
			},
		},
		{
			name: "empty manifests directory",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "ytt: Error: Expected file mark '**/*:type=yaml-plain' to match at least one file by path, but did not")),
			want: Result{
				Unpacked:       unpackedTrue,
				Installed:      c("Installed", "False", "InstallFailed", "invalid bundle: found zero objects: plain+v0 bundles are required to contain at least one object"),
				Healthy:        healthyFalse,
				ResolvedSource: pinnedSource,
			},
		},
		{
			name: "first deploy failed",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: no matches for kind \"OperatorGroup\" in version \"operators.coreos.com/v1\"")),
			want: Result{
				Unpacked:       unpackedTrue,
				Installed:      c("Installed", "False", "InstallFailed", "required resource not found, ensure CRDs are installed first: kapp: Error: no matches for kind \"OperatorGroup\" in version \"operators.coreos.com/v1\""),
				Healthy:        healthyFalse,
				ResolvedSource: pinnedSource,
			},
		},
		{
			name: "kapp finds no such kind",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: Expected to find kind 'operators.coreos.com/v1/OLMConfig', but did not")),
			want: Result{
				Unpacked:       unpackedTrue,
				Installed:      c("Installed", "False", "InstallFailed", "required resource not found, ensure CRDs are installed first: kapp: Error: Expected to find kind 'operators.coreos.com/v1/OLMConfig', but did not"),
				Healthy:        healthyFalse,
				ResolvedSource: pinnedSource,
			},
		},
		{
			name:      "deploy failed after an install is an upgrade failure",
			installed: &installedTrue,
			app:       newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(4, "kapp: Error: timed out")),
			want:      Result{Unpacked: unpackedTrue, Installed: c("Installed", "False", "UpgradeFailed", "kapp: Error: timed out"), Healthy: healthyFalse, ResolvedSource: pinnedSource},
		},
		{
			name: "failure without any detail still says something",
			app:  newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, deployFailed(4, "")),
			want: Result{Unpacked: unpackedTrue, Installed: c("Installed", "False", "InstallFailed", "kapp-controller reported a failure without details; see the App's status in the system namespace"), Healthy: healthyFalse, ResolvedSource: nil},
		},
		{
			name: "deleting",
			app:  newApp(1, 1, kappctrlv1alpha1.Deleting),
			want: Result{Unpacked: c("Unpacked", "Unknown", "Deleting", "Removing the objects this BundleDeployment installed"), Installed: c("Installed", "False", "Deleting", "Removing the objects this BundleDeployment installed"), Healthy: healthyFalse},
		},
		{
			name: "delete failed",
			app: newApp(1, 1, kappctrlv1alpha1.DeleteFailed, func(a *kappctrlv1alpha1.App) {
				a.Status.Conditions[0].Message = "Preparing kapp: Getting service account: serviceaccounts \"installer\" not found"
			}),
			want: Result{
				Unpacked:  c("Unpacked", "Unknown", "DeleteFailed", "Removing the installed objects failed: Preparing kapp: Getting service account: serviceaccounts \"installer\" not found"),
				Installed: c("Installed", "False", "DeleteFailed", "Removing the installed objects failed: Preparing kapp: Getting service account: serviceaccounts \"installer\" not found"),
				Healthy:   healthyFalse,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := FromApp(newBD(tt.installed), tt.app, nil)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("FromApp mismatch (-want +got):\n%s", d)
			}
			for _, cond := range []metav1.Condition{got.Unpacked, got.Installed, got.Healthy} {
				if cond.Message == "" || strings.Contains(cond.Message, "<nil>") {
					t.Errorf("condition %s has an unusable message %q", cond.Type, cond.Message)
				}
			}
		})
	}
}

// A periodic re-apply of what is installed must leave the stored status as
// it is: no flapping, and no status write at rest.
func TestReapplyKeepsStoredStatus(t *testing.T) {
	t.Parallel()
	bd := newBD(nil)
	done := FromApp(bd, newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)), nil)
	for _, cond := range []metav1.Condition{done.Unpacked, done.Installed, done.Healthy} {
		cond.ObservedGeneration = bd.Generation
		bd.Status.Conditions = append(bd.Status.Conditions, cond)
	}
	bd.Status.ResolvedSource = done.ResolvedSource
	for _, app := range []*kappctrlv1alpha1.App{
		newApp(2, 2, kappctrlv1alpha1.Reconciling),
		newApp(2, 2, kappctrlv1alpha1.Reconciling, fetchOK(5, 6)),
		newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(5, 6)),
		// kapp-controller v0.53.1 loses a ytt process now and then, and retries.
		newApp(2, 2, kappctrlv1alpha1.ReconcileFailed, fetchOK(5, 6), templateFailed(7, "Templating dir: waitid: no child processes"), failures(1)),
	} {
		got := FromApp(bd, app, nil)
		if d := cmp.Diff(done, got); d != "" {
			t.Errorf("App %s: status changed on a re-apply (-stored +got):\n%s", app.Status.Conditions[0].Type, d)
		}
		if InProgress(got) {
			t.Errorf("App %s: a re-apply counts as progress", app.Status.Conditions[0].Type)
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
