package status

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

var progressReasons = []string{
	rukpakv1alpha2.ReasonUnpackPending, rukpakv1alpha2.ReasonUnpacking,
	rukpakv1alpha2.ReasonInstallPending, rukpakv1alpha2.ReasonInstalling,
}

// InProgress says that r only reports work under way: the bundle is being
// fetched or deployed and nothing has failed or finished for this spec yet.
// The adapter writes such states sparingly, since the outcome follows.
func InProgress(r Result) bool {
	if r.Unpacked.Reason == rukpakv1alpha2.ReasonUnpackFailed || r.Healthy.Reason == rukpakv1alpha2.ReasonUnhealthy {
		return false
	}
	switch {
	case slices.Contains(progressReasons, r.Installed.Reason):
		return true
	case r.Installed.Reason == rukpakv1alpha2.ReasonInstallationSucceeded:
		// An upgrade under way beside the install that is kept.
		return slices.Contains(progressReasons, r.Unpacked.Reason)
	}
	return false
}

// ShowsProgress says that conditions, as stored for generation gen, already
// report work under way for that generation.
func ShowsProgress(conds []metav1.Condition, gen int64) bool {
	for _, c := range conds {
		if c.ObservedGeneration == gen && slices.Contains(progressReasons, c.Reason) {
			return true
		}
	}
	return false
}
