package status

import (
	"regexp"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// stage names the App sub-status that failed.
type stage int

const (
	stageNone stage = iota
	stageFetch
	stageTemplate
	stageDeploy
)

// failedStage is the stage with an error and the newest UpdatedAt: a failed
// stage stops the chain, so later stages keep the result of an earlier run.
func failedStage(app *kappctrlv1alpha1.App) stage {
	best, _ := lastFailure(app)
	return best
}

// lastFailure is failedStage with the time kapp-controller recorded its
// error at.
func lastFailure(app *kappctrlv1alpha1.App) (stage, metav1.Time) {
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
	return best, bestAt
}

// SpecWrittenAt is when app's spec (or metadata) was last written, by the
// API server's clock in whole seconds, as its managedFields record it
// (every writer's entry but the status subresource's).
func SpecWrittenAt(app *kappctrlv1alpha1.App) time.Time {
	var at time.Time
	for _, f := range app.ManagedFields {
		if f.Subresource == "" && f.Time != nil && f.Time.After(at) {
			at = f.Time.Time
		}
	}
	return at
}

// RetriesFailure says the run under way of app repeats its last run, which
// failed: kapp-controller retries a failed App with backoff, and a run the
// adapter asked for while the failed one was under way is of the same
// content. Neither changes the spec after the failure; a spec written since
// (a new generation, a rerun asked for what changed) is a new run.
func RetriesFailure(app *kappctrlv1alpha1.App) bool {
	if app == nil || len(app.Status.Conditions) == 0 || app.Status.Conditions[0].Type != kappctrlv1alpha1.Reconciling ||
		app.Status.ConsecutiveReconcileFailures == 0 {
		return false
	}
	failed, at := lastFailure(app)
	if failed == stageNone {
		return false
	}
	written := SpecWrittenAt(app)
	// Whole seconds: a write within the failure's second may have followed it.
	return !written.IsZero() && written.Before(at.Time)
}

// templateSince says when the template step of the run under way began:
// when kapp-controller recorded the end of the fetch.
func templateSince(app *kappctrlv1alpha1.App) (time.Time, bool) {
	if !ReportsSpec(app) || RunStep(app) != StepTemplate {
		return time.Time{}, false
	}
	return app.Status.Fetch.UpdatedAt.Time, true
}

// vendir prints its lock after a sync; an image entry pins the digest, a
// git entry the commit.
var (
	lockedImage  = regexp.MustCompile(`(?m)^\s*url:\s*(\S+@sha256:[0-9a-f]{64})\s*$`)
	lockedCommit = regexp.MustCompile(`(?m)^\s*sha:\s*([0-9a-f]{40,64})\s*$`)
)

// resolvedFromApp pins the source to what kapp-controller's last fetch
// locked; nil when its output names no digest or commit.
func resolvedFromApp(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App) *rukpakv1alpha2.BundleSource {
	src := bd.Spec.Source.DeepCopy()
	if src.Git == nil && src.Image == nil {
		return src
	}
	if app.Status.Fetch == nil {
		return nil
	}
	if src.Git != nil {
		m := lockedCommit.FindStringSubmatch(app.Status.Fetch.Stdout)
		if m == nil {
			return nil
		}
		src.Git.Ref = rukpakv1alpha2.GitRef{Commit: m[1]}
		return src
	}
	m := lockedImage.FindStringSubmatch(app.Status.Fetch.Stdout)
	if m == nil {
		return nil
	}
	src.Image.Ref = pinned(src.Image.Ref, m[1])
	return src
}

// pinned keeps the user's repository spelling and appends the fetched digest.
func pinned(ref, locked string) string {
	digest := locked[strings.LastIndex(locked, "@"):]
	repo := ref
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	} else if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + digest
}

// DescribeSource names the source for a message, without credentials.
func DescribeSource(bd *rukpakv1alpha2.BundleDeployment) string {
	src := bd.Spec.Source
	switch {
	case src.Image != nil:
		return "image " + src.Image.Ref
	case src.Git != nil:
		return "git " + RedactURL(src.Git.Repository)
	case src.HTTP != nil:
		return "http " + RedactURL(src.HTTP.URL)
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
