package harness

import (
	"fmt"

	kcv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/status"
)

// Reconciled reads the status of a kapp-controller object (an App, a
// PackageInstall or a PackageRepository) of generation gen as kctrl's
// waits do: done once that generation is observed and ReconcileSucceeded
// says so; an error (with done) at ReconcileFailed, naming the useful error
// message. One failure is not an end: kapp-controller v0.53.1 losing its
// own vendir or ytt process (status.LostChild), a race inside
// kapp-controller that it retries after a short backoff, on any cluster,
// and no verdict on the content. kctrl would stop there and its user run
// the command again; kapp-controller's retry is that second run.
func Reconciled(gen int64, st kcv1alpha1.GenericStatus) (done bool, err error) {
	if gen != st.ObservedGeneration {
		return false, nil
	}
	for _, c := range st.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case kcv1alpha1.ReconcileSucceeded:
			return true, nil
		case kcv1alpha1.ReconcileFailed:
			if status.LostChild(st.UsefulErrorMessage) {
				return false, nil
			}
			return true, fmt.Errorf("%s. %s", st.UsefulErrorMessage, st.FriendlyDescription)
		}
	}
	return false, nil
}
