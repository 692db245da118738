package status

import (
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// InvalidContent says why the content of f's generation is not a bundle of
// its class (the built-in class it is installed as), in the words Compute
// gives Installed for it; "" when it is one, or when that is not known yet.
// rukpak v0.16 found this when it unpacked a v1alpha1 Bundle (plain
// manifests parsed, registry+v1 converted, a chart loaded), before any
// install, so there it fails the Bundle, not the install. A chart's
// templates failing to render is an install's failure in every version.
func InvalidContent(f Facts, class string) string {
	if f.Failure != nil {
		if f.Failure.Kind == BundleInvalid {
			return "invalid bundle: " + Message(f.Failure.Message)
		}
		return ""
	}
	s := newState(f)
	if f.Package != nil || !s.appSpeaksFor() {
		return ""
	}
	app := s.App
	if (app.Status.Conditions[0].Type != kappctrlv1alpha1.ReconcileFailed && !RetriesFailure(app)) || (s.current && app.Status.ConsecutiveReconcileFailures < 2) {
		return ""
	}
	detail := Message(app.Status.UsefulErrorMessage, app.Status.Conditions[0].Message)
	switch failedStage(app) {
	case stageFetch:
		if emptyContent(detail) {
			return "invalid bundle: " + zeroObjects
		}
	case stageTemplate:
		if class != rukpakv1alpha2.ClassHelm && !LostChild(detail) {
			return explainTemplate(detail)
		}
	case stageDeploy:
		if strings.Contains(detail, "empty set of resources") {
			return "invalid bundle: " + zeroObjects
		}
	}
	return ""
}
