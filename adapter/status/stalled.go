package status

import (
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// WithTemplateDeadline turns a template step that has run longer than limit
// into a failure the user can see. Otherwise r is returned unchanged, with
// the time left until the deadline (0 when no template step is running or
// limit is 0), so the caller can look again then.
func WithTemplateDeadline(r Result, app *kappctrlv1alpha1.App, now time.Time, limit time.Duration) (Result, time.Duration) {
	since, running := templateSince(app)
	if !running || limit <= 0 {
		return r, 0
	}
	if left := since.Add(limit).Sub(now); left > 0 {
		return r, left
	}
	r.Installed = cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, rukpakv1alpha2.ReasonInstallFailed,
		fmt.Sprintf("kapp-controller's template step has run for more than %s on this bundle without finishing. "+
			"Either %s, or a chart template loops for long. This condition changes when the step ends", limit, aliasHint))
	r.Healthy = notInstalled()
	return r, 0
}

// templateSince says when the template step of the run under way began.
// kapp-controller records the end of the fetch as the run goes, but the
// template only once it ends, so a fetch newer than the last template
// result marks a template step still running.
func templateSince(app *kappctrlv1alpha1.App) (time.Time, bool) {
	if app == nil || app.Status.ObservedGeneration != app.Generation || len(app.Status.Conditions) == 0 ||
		app.Status.Conditions[0].Type != kappctrlv1alpha1.Reconciling || !fetchDone(app.Status.Fetch) {
		return time.Time{}, false
	}
	f := app.Status.Fetch
	if t := app.Status.Template; t != nil && !t.UpdatedAt.Before(&f.UpdatedAt) {
		return time.Time{}, false
	}
	return f.UpdatedAt.Time, true
}

// fetchDone says that the run under way has fetched: kapp-controller resets
// StartedAt when a run begins and sets UpdatedAt when the fetch ends.
func fetchDone(f *kappctrlv1alpha1.AppStatusFetch) bool {
	return f != nil && f.ExitCode == 0 && f.Error == "" && !f.UpdatedAt.IsZero() && !f.UpdatedAt.Before(&f.StartedAt)
}
