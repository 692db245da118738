package status

import (
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// In the serve mode the App is the PackageInstall's: it says which Package
// version its spec comes from, never which BundleDeployment generation.
func ofVersion(v string) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Annotations = map[string]string{AnnotationAppPackageVersion: v}
	}
}

type installState func(*packagingv1alpha1.PackageInstall)

func newInstall(gen, observed int64, mods ...installState) *packagingv1alpha1.PackageInstall {
	pi := &packagingv1alpha1.PackageInstall{
		ObjectMeta: metav1.ObjectMeta{Name: "bd1", Namespace: "rukpak-system", Generation: gen},
		Spec:       packagingv1alpha1.PackageInstallSpec{PackageRef: &packagingv1alpha1.PackageRef{RefName: "bd1.bundles.rukpak-kapp.dev"}},
	}
	pi.Status.ObservedGeneration = observed
	for _, m := range mods {
		m(pi)
	}
	return pi
}

func withValues(secret string) installState {
	return func(pi *packagingv1alpha1.PackageInstall) {
		pi.Spec.Values = []packagingv1alpha1.PackageInstallValues{{SecretRef: &packagingv1alpha1.PackageInstallValuesSecretRef{Name: secret}}}
	}
}

// valuesFrom is the App kapp-controller makes from a PackageInstall with
// that values Secret (pkg/packageinstall/app.go adds it to helmTemplate).
func valuesFrom(secret string) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Spec.Template = []kappctrlv1alpha1.AppTemplate{{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{
			ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{SecretRef: &kappctrlv1alpha1.AppTemplateValuesSourceRef{Name: secret}}},
		}}}
	}
}

// recorded is a PackageInstall whose run copied its App's success.
func recorded(pi *packagingv1alpha1.PackageInstall) {
	pi.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileSucceeded, Status: corev1.ConditionTrue}}
}

// installFailed is the PackageInstall's own failure, as kapp-controller
// v0.53.1 stores it (pkg/reconciler/status.go SetReconcileCompleted).
func installFailed(message, useful, version, lastAttempted string) installState {
	return func(pi *packagingv1alpha1.PackageInstall) {
		pi.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileFailed, Status: corev1.ConditionTrue, Message: message}}
		pi.Status.UsefulErrorMessage = useful
		pi.Status.Version, pi.Status.LastAttemptedVersion = version, lastAttempted
	}
}

func TestComputePackageInstall(t *testing.T) {
	t.Parallel()
	installedV2 := c("Installed", "True", "InstallationSucceeded",
		"Instantiated bundle bd1: version 2.0.0 of Package bd1.bundles.rukpak-kapp.dev through PackageInstall rukpak-system/bd1")
	packageWait := c("Unpacked", "False", "UnpackPending", "Waiting for kapp-controller to install version 2.0.0 of the Package through the PackageInstall")
	// What generation 1 installed stays said while generation 2 is on its way.
	stays := want{unpacked: g(2, packageWait), installed: g(1, installedTrue), healthy: g(1, healthyTrue), resolved: olderSource, hold: true, writeAfter: ProgressDelay}
	noPackage := "kapp-controller's PackageInstall rukpak-system/bd1 did not install version 2.0.0: Expected to find at least one version, but did not (details: all=1 -> after-prereleases-filter=1 -> after-kapp-controller-version-check=1 -> after-constraints-filter=0)"
	tests := []struct {
		name    string
		stored  stored
		install *packagingv1alpha1.PackageInstall
		app     *kappctrlv1alpha1.App
		fetched bool
		want    want
	}{
		{
			name: "no PackageInstall yet: progress is held",
			want: want{unpacked: g(2, packageWait), installed: g(2, installWait), healthy: g(2, healthyWait), hold: true, writeAfter: ProgressDelay},
		},
		{
			name:    "this generation's version deployed",
			install: newInstall(1, 1, recorded),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("2.0.0")),
			want:    want{unpacked: g(2, unpackedTrue), installed: g(2, installedV2), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		{
			name:    "this generation's version deployed, the PackageInstall still says Reconciling: installing, so kctrl never disagrees",
			install: newInstall(1, 1),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("2.0.0")),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "Unknown", "Installing",
				"kapp-controller deployed version 2.0.0 and has yet to record it on PackageInstall rukpak-system/bd1")),
				healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay},
		},
		{
			name:    "this generation's version deployed, the PackageInstall still shows a failure: installing, naming it",
			install: newInstall(1, 1, installFailed("Error (see .status.usefulErrorMessage for details)", "Expected to find at least one version, but did not", "2.0.0", "2.0.0")),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("2.0.0")),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "Unknown", "Installing",
				"kapp-controller deployed version 2.0.0 and has yet to record it on PackageInstall rukpak-system/bd1, whose last run says: Expected to find at least one version, but did not")),
				healthy: g(2, healthyWait), resolved: pinnedSource, hold: true, writeAfter: ProgressDelay},
		},
		{
			name:    "an upgrade deployed, the PackageInstall still says Reconciling: the installed generation stays",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 2),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("2.0.0")),
			want:    want{unpacked: g(2, unpackedTrue), installed: g(1, installedTrue), healthy: g(1, healthyTrue), resolved: olderSource, hold: true, writeAfter: ProgressDelay},
		},
		// The generation rule: Installed=True moves to generation 2 only
		// once kapp-controller deployed generation 2's version.
		{
			name:    "upgrade written, the PackageInstall has not taken it: the installed generation stays",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 1),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("2.0.0")),
			want:    stays,
		},
		{
			name:    "the PackageInstall took it, its App still deploys the old version: the installed generation stays",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 2),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("1.0.0")),
			want:    stays,
		},
		{
			name:    "the App has the new version but has not deployed it: the installed generation stays",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 2),
			app:     newApp(4, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("2.0.0")),
			want:    stays,
		},
		{
			name:    "new values: the PackageInstall took them and says so before its App's update is seen: the installed generation stays",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 2, withValues("bd1-values-new")),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("2.0.0"), valuesFrom("bd1-values-old")),
			want:    stays,
		},
		{
			name:    "new values deployed",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 2, withValues("bd1-values-new"), recorded),
			app:     newApp(4, 4, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("2.0.0"), valuesFrom("bd1-values-new")),
			want:    want{unpacked: g(2, unpackedTrue), installed: g(2, installedV2), healthy: g(2, healthyTrue), resolved: pinnedSource},
		},
		{
			name:    "no Package matches on upgrade: UpgradeFailed in the PackageInstall's words, what is installed stays",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 2, installFailed("Expected to find at least one version, but did not (details: all=1 -> after-prereleases-filter=1 -> after-kapp-controller-version-check=1 -> after-constraints-filter=0)", "", "1.0.0", "1.0.0")),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("1.0.0")),
			want:    want{unpacked: g(2, packageWait), installed: g(2, c("Installed", "False", "UpgradeFailed", noPackage)), healthy: g(2, healthyFalse), resolved: olderSource},
		},
		{
			name:    "a refused downgrade names both versions",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 2, installFailed("Error (see .status.usefulErrorMessage for details)", "Stopped installing matched version '2.0.0' since last attempted version '3.0.0' is higher.", "2.0.0", "3.0.0")),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), ofVersion("3.0.0")),
			fetched: true,
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "UpgradeFailed",
				"kapp-controller's PackageInstall rukpak-system/bd1 did not install version 2.0.0 (it selected version 2.0.0; the last version it attempted is 3.0.0): Stopped installing matched version '2.0.0' since last attempted version '3.0.0' is higher.")),
				healthy: g(2, healthyFalse), resolved: olderSource},
		},
		{
			name:    "a first install that no Package matches: InstallFailed",
			install: newInstall(1, 1, installFailed("Package bd1.bundles.rukpak-kapp.dev not found", "", "", "")),
			want: want{unpacked: g(2, packageWait), installed: g(2, c("Installed", "False", "InstallFailed",
				"kapp-controller's PackageInstall rukpak-system/bd1 did not install version 2.0.0: Package bd1.bundles.rukpak-kapp.dev not found")), healthy: g(2, healthyFalse)},
		},
		{
			name:    "the App of this version failed to template: the App's words, not the PackageInstall's echo",
			stored:  installedAt(1, olderSource),
			install: newInstall(2, 2, installFailed("Error (see .status.usefulErrorMessage for details)", "ytt: Error: yaml: line 3: did not find expected key", "2.0.0", "2.0.0")),
			app:     newApp(3, 3, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), ofVersion("2.0.0"), templateFailed(3, "ytt: Error: yaml: line 3: did not find expected key")),
			want: want{unpacked: g(2, unpackedTrue), installed: g(2, c("Installed", "False", "UpgradeFailed", "invalid bundle: ytt: Error: yaml: line 3: did not find expected key")),
				healthy: g(2, healthyFalse), resolved: olderSource},
		},
		{
			name:    "an App-mode App the PackageInstall has not taken over yet does not speak, whatever generation it names",
			install: newInstall(1, 0),
			app:     newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			want:    want{unpacked: g(2, packageWait), installed: g(2, installWait), healthy: g(2, healthyWait), hold: true, writeAfter: ProgressDelay},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bd := newBD(nil)
			bd.Status.Conditions, bd.Status.ResolvedSource = tt.stored.conds, tt.stored.resolved
			f := Facts{BD: bd, App: tt.app, Now: t0.Add(time.Hour), Package: &PackageFacts{Version: "2.0.0", Install: tt.install}}
			if tt.fetched {
				f.Fetched = pinnedSource
			}
			checkOutcome(t, Compute(f), tt.want)
		})
	}
}
