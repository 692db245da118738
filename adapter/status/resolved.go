package status

import (
	"regexp"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// vendir prints its lock after a sync; an image entry pins the digest, a
// git entry the commit.
var (
	lockedImage  = regexp.MustCompile(`(?m)^\s*url:\s*(\S+@sha256:[0-9a-f]{64})\s*$`)
	lockedCommit = regexp.MustCompile(`(?m)^\s*sha:\s*([0-9a-f]{40,64})\s*$`)
)

// resolvedSource pins the source to what kapp-controller fetched. Until the
// fetch output names a digest it reports the last pinned source, if any.
func resolvedSource(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App) *rukpakv1alpha2.BundleSource {
	src := bd.Spec.Source.DeepCopy()
	if src.Git != nil {
		if app.Status.Fetch == nil {
			return bd.Status.ResolvedSource
		}
		m := lockedCommit.FindStringSubmatch(app.Status.Fetch.Stdout)
		if m == nil {
			return bd.Status.ResolvedSource
		}
		src.Git.Ref = rukpakv1alpha2.GitRef{Commit: m[1]}
		return src
	}
	if src.Image == nil {
		return src
	}
	if app.Status.Fetch == nil {
		return bd.Status.ResolvedSource
	}
	m := lockedImage.FindStringSubmatch(app.Status.Fetch.Stdout)
	if m == nil {
		return bd.Status.ResolvedSource
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
