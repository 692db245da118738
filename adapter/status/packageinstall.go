package status

import (
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// AnnotationAppPackageVersion is where kapp-controller records, on the App
// a PackageInstall makes, the Package version the App's spec comes from.
const AnnotationAppPackageVersion = "packaging.carvel.dev/package-version"

// PackageFacts are what a reconcile in the serve mode learned about the
// BundleDeployment's PackageInstall.
type PackageFacts struct {
	// Version is the Package version this generation installs: the
	// generation rule holds an install of any other version as not yet
	// this generation's.
	Version string
	// Install is the live PackageInstall after this reconcile wrote it;
	// nil when there is none (yet).
	Install *packagingv1alpha1.PackageInstall
}

// PackageDeployed says kapp-controller deployed version of the Package
// through pi's App: pi has taken its current spec (it updates the App
// before it stores that), the App says version and has deployed its own
// current spec, and pi records that success, so kctrl package installed
// get agrees.
func PackageDeployed(pi *packagingv1alpha1.PackageInstall, app *kappctrlv1alpha1.App, version string) bool {
	return appSpeaksForVersion(pi, app, version) && app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded &&
		packageInstallSucceeded(pi)
}

// packageInstallSucceeded says pi's status records a successful run.
// kapp-controller copies the App's outcome onto pi in its next run of pi,
// which the App's status change starts: until then pi says Reconciling
// while its App has succeeded.
func packageInstallSucceeded(pi *packagingv1alpha1.PackageInstall) bool {
	return piCondition(pi, kappctrlv1alpha1.ReconcileSucceeded) != nil
}

// unrecorded is the progress message of a version the App deployed and
// the PackageInstall does not yet say so. A failure the PackageInstall
// still shows is named: an App's failure it copied before the App's last
// run, or its own, which then is why it never says so.
func (s state) unrecorded() string {
	pi := s.Package.Install
	msg := fmt.Sprintf("kapp-controller deployed version %s and has yet to record it on PackageInstall %s/%s", s.Package.Version, pi.Namespace, pi.Name)
	if c := failedCondition(pi); c != nil {
		msg += ", whose last run says: " + Message(pi.Status.UsefulErrorMessage, c.Message)
	}
	return msg
}

func appSpeaksForVersion(pi *packagingv1alpha1.PackageInstall, app *kappctrlv1alpha1.App, version string) bool {
	return pi != nil && pi.Status.ObservedGeneration == pi.Generation &&
		app != nil && app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
		app.Annotations[AnnotationAppPackageVersion] == version && appTakes(app, pi)
}

// appTakes says the App was made from pi's current spec. pi's status
// cannot say it: kapp-controller stores pi's status in the same run in
// which it updates the App, and the two are read from different watches,
// so pi may be seen as done before the App's update is. A values change
// keeps the Package version, so the version cannot say it either.
func appTakes(app *kappctrlv1alpha1.App, pi *packagingv1alpha1.PackageInstall) bool {
	if app.Spec.ServiceAccountName != pi.Spec.ServiceAccountName || app.Spec.DefaultNamespace != pi.Spec.DefaultNamespace ||
		(pi.Spec.SyncPeriod != nil && (app.Spec.SyncPeriod == nil || *app.Spec.SyncPeriod != *pi.Spec.SyncPeriod)) {
		return false
	}
	used := map[string]bool{}
	for _, t := range app.Spec.Template {
		var from []kappctrlv1alpha1.AppTemplateValuesSource
		switch {
		case t.HelmTemplate != nil:
			from = t.HelmTemplate.ValuesFrom
		case t.Ytt != nil:
			from = t.Ytt.ValuesFrom
		}
		for _, v := range from {
			if v.SecretRef != nil {
				used[v.SecretRef.Name] = true
			}
		}
	}
	for _, v := range pi.Spec.Values {
		if v.SecretRef != nil && !used[v.SecretRef.Name] {
			return false
		}
	}
	return true
}

// packageInstallFailure is the PackageInstall's own failure for this
// generation: one that never reached the App (no Package matches, a
// refused downgrade), so the App cannot tell it.
func (s state) packageInstallFailure() (string, bool) {
	p := s.Package
	if p == nil || p.Install == nil || appSpeaksForVersion(p.Install, s.App, p.Version) {
		return "", false
	}
	pi := p.Install
	if pi.Status.ObservedGeneration != pi.Generation {
		return "", false
	}
	if c := failedCondition(pi); c != nil {
		return fmt.Sprintf("kapp-controller's PackageInstall %s/%s did not install version %s%s: %s",
			pi.Namespace, pi.Name, p.Version, attempted(pi), Message(pi.Status.UsefulErrorMessage, c.Message)), true
	}
	return "", false
}

// PackageInstallFailed says kapp-controller's last run of pi failed.
func PackageInstallFailed(pi *packagingv1alpha1.PackageInstall) bool {
	return pi != nil && failedCondition(pi) != nil
}

func failedCondition(pi *packagingv1alpha1.PackageInstall) *kappctrlv1alpha1.Condition {
	return piCondition(pi, kappctrlv1alpha1.ReconcileFailed)
}

// piCondition is pi's condition of type t when it is true; nil otherwise.
func piCondition(pi *packagingv1alpha1.PackageInstall, t kappctrlv1alpha1.ConditionType) *kappctrlv1alpha1.Condition {
	for i, c := range pi.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &pi.Status.Conditions[i]
		}
	}
	return nil
}

// attempted names the versions the PackageInstall reports when they are
// not simply the one asked for.
func attempted(pi *packagingv1alpha1.PackageInstall) string {
	st := pi.Status
	if st.LastAttemptedVersion == "" || st.LastAttemptedVersion == st.Version {
		return ""
	}
	return fmt.Sprintf(" (it selected version %s; the last version it attempted is %s)", st.Version, st.LastAttemptedVersion)
}

// packageFailed reports the PackageInstall's own failure. What the adapter
// fetched itself is unpacked; what the Package fetches is not yet.
func (s state) packageFailed(msg string) conditions {
	unpacked := s.unpackedTrue()
	if s.Fetched == nil {
		unpacked = s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackPending, s.waitingFor())
	}
	return s.installFailed(unpacked, msg)
}

// installedMessage is Installed=True's message: in the serve mode it names
// the version and the PackageInstall.
func (s state) installedMessage() string {
	if p := s.Package; p != nil && p.Install != nil {
		return fmt.Sprintf("Instantiated bundle %s: version %s of Package %s through PackageInstall %s/%s",
			s.BD.Name, p.Version, p.Install.Spec.PackageRef.RefName, p.Install.Namespace, p.Install.Name)
	}
	return fmt.Sprintf("Instantiated bundle %s", s.BD.Name)
}

// notPickedUp is the pending message of an App kapp-controller has not yet
// picked up, and when to look again: past the template timeout after the
// adapter last wrote the App, it names the likely causes instead.
func (s state) notPickedUp() (string, time.Duration) {
	app := s.App
	if s.Package != nil || app == nil || app.Status.ObservedGeneration == app.Generation || s.TemplateTimeout == 0 {
		return s.waitingFor(), 0
	}
	wrote := appWrittenAt(app)
	if left := wrote.Add(s.TemplateTimeout).Sub(s.Now); left > 0 {
		return s.waitingFor(), left
	}
	return fmt.Sprintf("kapp-controller has not picked up App %s/%s since it was written %s ago: check that kapp-controller runs "+
		"(v0.53.1 or newer), that it watches namespace %s, and that it is not busy with many other Apps",
		app.Namespace, app.Name, s.Now.Sub(wrote).Truncate(time.Second), app.Namespace), 0
}

// appWrittenAt is when the adapter last applied the App (its field
// manager's entry), else when the App was made.
func appWrittenAt(app *kappctrlv1alpha1.App) time.Time {
	at := app.CreationTimestamp.Time
	for _, m := range app.ManagedFields {
		if m.Manager == fieldowner.Name && m.Time != nil && m.Time.After(at) {
			at = m.Time.Time
		}
	}
	return at
}

// waitingFor names what kapp-controller is to pick up for this generation.
func (s state) waitingFor() string {
	if s.Package != nil {
		return fmt.Sprintf("Waiting for kapp-controller to install version %s of the Package through the PackageInstall", s.Package.Version)
	}
	return "Waiting for kapp-controller to pick up the App for this generation"
}
