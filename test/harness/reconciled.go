package harness

import (
	"fmt"
	"strings"

	kcv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
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
			if status.LostChild(st.UsefulErrorMessage) || silent(st.UsefulErrorMessage) {
				return false, nil
			}
			return true, fmt.Errorf("%s. %s", st.UsefulErrorMessage, st.FriendlyDescription)
		}
	}
	return false, nil
}

// starlarkWarning is what helm (which links Starlark) prints on every run
// under the harness's cap on the sidecar's address space (sidecarMemory):
// Starlark's reservation of 4 GiB of address space at start is refused,
// which a container's memory limit never does.
const starlarkWarning = "Starlark failed to allocate 4GB address space"

// silent says a failed step's stderr holds nothing but that warning: the
// process said nothing of why it failed. kapp-controller reports a step's
// stderr instead of its error when there is any, so this is how a helm
// process it lost (status.LostChild's race, whose "waitid: no child
// processes" is in the error) reads here; a real helm failure always says
// why ("Error: ..."). kapp-controller retries the step either way.
func silent(msg string) bool {
	var rest []string
	for _, line := range strings.Split(msg, "\n") {
		if !strings.Contains(line, starlarkWarning) && strings.TrimSpace(line) != "" {
			rest = append(rest, line)
		}
	}
	return strings.Contains(msg, starlarkWarning) && len(rest) == 0
}
