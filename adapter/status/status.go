// Package status turns an App's status into a BundleDeployment's
// conditions and resolvedSource. It is pure: no client, no clock.
package status

import (
	"fmt"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Result is the whole status the adapter wants for a BundleDeployment.
type Result struct {
	Unpacked, Installed, Healthy metav1.Condition
	ResolvedSource               *rukpakv1alpha2.BundleSource
}

// stage names the App sub-status that failed.
type stage int

const (
	stageNone stage = iota
	stageFetch
	stageTemplate
	stageDeploy
)

// FromApp derives the status of bd from app, which may be nil when the App
// does not exist yet. The BD's current conditions decide between an install
// and an upgrade failure. resolved is the source the adapter fetched itself
// (image digest, git commit), nil when kapp-controller fetched.
func FromApp(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App, resolved *rukpakv1alpha2.BundleSource) Result {
	r := fromApp(bd, app)
	if resolved != nil && r.Unpacked.Status == metav1.ConditionTrue {
		r.ResolvedSource = resolved.DeepCopy()
	}
	return r
}

func fromApp(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App) Result {
	if app == nil || app.Status.ObservedGeneration != app.Generation || len(app.Status.Conditions) == 0 {
		return pending(bd, "Waiting for kapp-controller to pick up the App for this generation")
	}
	switch app.Status.Conditions[0].Type {
	case kappctrlv1alpha1.ReconcileSucceeded:
		return succeeded(bd, app)
	case kappctrlv1alpha1.ReconcileFailed:
		if installed, ok := installedCurrent(bd); ok && app.Status.ConsecutiveReconcileFailures < 2 {
			return reapplying(bd, installed)
		}
		return failed(bd, app)
	case kappctrlv1alpha1.Deleting:
		return deleting(bd, rukpakv1alpha2.ReasonDeleting, "Removing the objects this BundleDeployment installed")
	case kappctrlv1alpha1.DeleteFailed:
		return deleting(bd, rukpakv1alpha2.ReasonDeleteFailed,
			"Removing the installed objects failed: "+Message(app.Status.UsefulErrorMessage, app.Status.Conditions[0].Message))
	default:
		if installed, ok := installedCurrent(bd); ok {
			return reapplying(bd, installed)
		}
		return reconciling(bd, app)
	}
}

// installedCurrent is the stored Installed condition when it says that
// the BundleDeployment's current generation is installed.
func installedCurrent(bd *rukpakv1alpha2.BundleDeployment) (metav1.Condition, bool) {
	c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != bd.Generation {
		return metav1.Condition{}, false
	}
	return cond(c.Type, c.Status, c.Reason, c.Message), true
}

// reapplying covers a run of kapp-controller on a generation that is
// installed already: its sync period came round, or content it reads was
// rewritten. Such a run is not news: the BundleDeployment keeps saying what
// is installed until the run ends, so a thousand idle installs re-applied
// under load neither flap to Unpacking nor cost status writes, and the
// installed workloads still decide Healthy. A new resolved source comes
// with the outcome. A run that fails once is held too: kapp-controller
// retries a failed App after 2 s, and a one-off failure of installed content
// is kapp-controller's own (its sidecar loses a vendir or ytt exit status to
// its zombie reaper now and then, see lostChild), not a change in what is
// installed. A second failure in a row is reported as usual.
func reapplying(bd *rukpakv1alpha2.BundleDeployment, installed metav1.Condition) Result {
	return Result{
		Unpacked:       currentOr(bd, rukpakv1alpha2.TypeUnpacked, unpacked(bd)),
		Installed:      installed,
		Healthy:        healthyAfterInstalled(installed),
		ResolvedSource: bd.Status.ResolvedSource,
	}
}

// FromUnsupported is the status for a BundleDeployment whose App cannot be
// made, for example because its source is not supported.
func FromUnsupported(bd *rukpakv1alpha2.BundleDeployment, err error) Result {
	r := pending(bd, "")
	r.Unpacked = cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed, Message(err.Error()))
	r.Installed = cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, rukpakv1alpha2.ReasonInstallFailed,
		"The bundle cannot be installed: "+Message(err.Error()))
	r.Healthy = notInstalled()
	return r
}

// FromFetchError is the status when the adapter's own fetch failed.
func FromFetchError(bd *rukpakv1alpha2.BundleDeployment, err error) Result {
	r := pending(bd, "")
	r.Unpacked = cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed,
		fmt.Sprintf("source bundle content: fetch %s: %s", describeSource(bd), Message(err.Error())))
	r.Healthy = healthyAfterInstalled(r.Installed)
	r.ResolvedSource = bd.Status.ResolvedSource
	return r
}

// FromInvalidBundle is the status when fetched content is not a valid bundle.
func FromInvalidBundle(bd *rukpakv1alpha2.BundleDeployment, err error) Result {
	return Result{
		Unpacked:  unpacked(bd),
		Installed: cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, rukpakv1alpha2.ReasonInstallFailed, "invalid bundle: "+Message(err.Error())),
		Healthy:   notInstalled(),
	}
}

func pending(bd *rukpakv1alpha2.BundleDeployment, msg string) Result {
	return Result{
		Unpacked:  cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackPending, msg),
		Installed: keepInstalled(bd, rukpakv1alpha2.ReasonInstallPending, "Waiting for the bundle to be unpacked"),
		Healthy:   cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionUnknown, rukpakv1alpha2.ReasonInstallationStatusUnknown, "Waiting for the bundle to be installed"),
	}
}

func succeeded(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App) Result {
	return Result{
		Unpacked:       unpacked(bd),
		Installed:      cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded, fmt.Sprintf("Instantiated bundle %s", bd.Name)),
		Healthy:        cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionTrue, rukpakv1alpha2.ReasonHealthy, "BundleDeployment is healthy"),
		ResolvedSource: resolvedSource(bd, app),
	}
}

func failed(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App) Result {
	detail := Message(app.Status.UsefulErrorMessage, app.Status.Conditions[0].Message)
	switch failedStage(app) {
	case stageFetch:
		if emptyContent(detail) {
			// The source was reached and is empty: a bundle problem, not a fetch problem.
			return Result{
				Unpacked:  cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionTrue, rukpakv1alpha2.ReasonUnpackSuccessful, fmt.Sprintf("Unpacked the %s Bundle; it holds no files", bd.Spec.Source.Type)),
				Installed: cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, rukpakv1alpha2.ReasonInstallFailed, "invalid bundle: "+zeroObjects),
				Healthy:   notInstalled(),
			}
		}
		r := pending(bd, "")
		r.Unpacked = cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed,
			fmt.Sprintf("source bundle content: fetch %s: %s", describeSource(bd), explainFetch(detail)))
		r.Healthy = healthyAfterInstalled(r.Installed)
		return r
	case stageTemplate:
		return Result{
			Unpacked:       unpacked(bd),
			Installed:      cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, rukpakv1alpha2.ReasonInstallFailed, explainTemplate(detail)),
			Healthy:        notInstalled(),
			ResolvedSource: resolvedSource(bd, app),
		}
	default:
		reason := rukpakv1alpha2.ReasonInstallFailed
		if wasInstalled(bd) {
			reason = rukpakv1alpha2.ReasonUpgradeFailed
		}
		return Result{
			Unpacked:       unpacked(bd),
			Installed:      cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, reason, explainDeploy(detail)),
			Healthy:        notInstalled(),
			ResolvedSource: resolvedSource(bd, app),
		}
	}
}

// reconciling covers a run in progress, before or after its fetch.
func reconciling(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App) Result {
	if !fetchDone(app.Status.Fetch) {
		r := pending(bd, "")
		r.Unpacked = cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpacking, fmt.Sprintf("Fetching %s", describeSource(bd)))
		return r
	}
	return Result{
		Unpacked:       unpacked(bd),
		Installed:      keepInstalled(bd, rukpakv1alpha2.ReasonInstalling, "kapp is applying the bundle and waiting for its objects to become ready"),
		Healthy:        cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionUnknown, rukpakv1alpha2.ReasonInstallationStatusUnknown, "Waiting for the bundle to be installed"),
		ResolvedSource: resolvedSource(bd, app),
	}
}

func deleting(bd *rukpakv1alpha2.BundleDeployment, reason, msg string) Result {
	return Result{
		Unpacked:       currentOr(bd, rukpakv1alpha2.TypeUnpacked, cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionUnknown, reason, msg)),
		Installed:      cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, reason, msg),
		Healthy:        notInstalled(),
		ResolvedSource: bd.Status.ResolvedSource,
	}
}

// failedStage is the stage with an error and the newest UpdatedAt: a failed
// stage stops the chain, so later stages keep the result of an earlier run.
func failedStage(app *kappctrlv1alpha1.App) stage {
	best, bestAt := stageNone, metav1.Time{}
	consider := func(s stage, errText string, at metav1.Time) {
		if errText != "" && (best == stageNone || bestAt.Before(&at)) {
			best, bestAt = s, at
		}
	}
	if f := app.Status.Fetch; f != nil {
		consider(stageFetch, f.Error, f.UpdatedAt)
	}
	if t := app.Status.Template; t != nil {
		consider(stageTemplate, t.Error, t.UpdatedAt)
	}
	if d := app.Status.Deploy; d != nil {
		consider(stageDeploy, d.Error, d.UpdatedAt)
	}
	return best
}

func unpacked(bd *rukpakv1alpha2.BundleDeployment) metav1.Condition {
	return cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionTrue, rukpakv1alpha2.ReasonUnpackSuccessful,
		fmt.Sprintf("Successfully unpacked the %s Bundle", bd.Spec.Source.Type))
}

func notInstalled() metav1.Condition {
	return cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionFalse, rukpakv1alpha2.ReasonInstallationStatusFalse, "Installed condition is false")
}

func healthyAfterInstalled(installed metav1.Condition) metav1.Condition {
	if installed.Status == metav1.ConditionTrue {
		return cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionTrue, rukpakv1alpha2.ReasonHealthy, "BundleDeployment is healthy")
	}
	return cond(rukpakv1alpha2.TypeHealthy, metav1.ConditionUnknown, rukpakv1alpha2.ReasonInstallationStatusUnknown, "Waiting for the bundle to be installed")
}

// keepInstalled keeps an earlier successful install visible while a new run
// is pending: the objects of the last good deploy are still in the cluster.
func keepInstalled(bd *rukpakv1alpha2.BundleDeployment, reason, msg string) metav1.Condition {
	if c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled); c != nil && c.Status == metav1.ConditionTrue {
		return cond(c.Type, c.Status, c.Reason, c.Message)
	}
	return cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionUnknown, reason, msg)
}

func currentOr(bd *rukpakv1alpha2.BundleDeployment, condType string, fallback metav1.Condition) metav1.Condition {
	if c := apimeta.FindStatusCondition(bd.Status.Conditions, condType); c != nil {
		return cond(c.Type, c.Status, c.Reason, c.Message)
	}
	return fallback
}

func wasInstalled(bd *rukpakv1alpha2.BundleDeployment) bool {
	c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	return c != nil && (c.Status == metav1.ConditionTrue || c.Reason == rukpakv1alpha2.ReasonUpgradeFailed)
}

func cond(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	if msg == "" {
		msg = reason
	}
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

func describeSource(bd *rukpakv1alpha2.BundleDeployment) string {
	src := bd.Spec.Source
	switch {
	case src.Image != nil:
		return "image " + src.Image.Ref
	case src.Git != nil:
		return "git " + src.Git.Repository
	case src.HTTP != nil:
		return "http " + src.HTTP.URL
	case len(src.ConfigMaps) > 0:
		names := make([]string, 0, len(src.ConfigMaps))
		for _, cm := range src.ConfigMaps {
			names = append(names, cm.ConfigMap.Name)
		}
		return "configMaps " + strings.Join(names, ", ")
	default:
		return src.Type + " source"
	}
}
