package client

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func deploymentWithArgs(args ...string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Args: args}}
	return d
}

// The adapter must read the global packaging namespace kapp-controller
// shares: the check compares their Deployments' flags (kapp-controller's
// with one dash, as its release writes it), defaults included: none for
// kapp-controller, its release's for the adapter.
func TestEvalGlobalNamespace(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		kapp, adapter *appsv1.Deployment
		status        string
		words         string
	}{
		{"both the releases' defaults", deploymentWithArgs("-packaging-global-namespace=kapp-controller-packaging-global"), deploymentWithArgs("run"), CheckOK, "both share those of namespace kapp-controller-packaging-global"},
		{"both set alike", deploymentWithArgs("-packaging-global-namespace=catalogs-for-all"), deploymentWithArgs("--packaging-global-namespace", "catalogs-for-all"), CheckOK, "namespace catalogs-for-all"},
		{"kapp-controller without the flag shares none", deploymentWithArgs("-namespace=apps"), deploymentWithArgs("run"), CheckFail, `--packaging-global-namespace=""`},
		{"neither shares any", deploymentWithArgs(), deploymentWithArgs("--packaging-global-namespace="), CheckOK, "both share no namespace's"},
		{"kapp-controller's differs", deploymentWithArgs("-packaging-global-namespace=catalogs-for-all"), deploymentWithArgs("run"), CheckFail, `--packaging-global-namespace="catalogs-for-all"`},
		{"no kapp-controller Deployment", nil, deploymentWithArgs("run"), CheckOK, "not compared"},
	} {
		got := evalGlobalNamespace(tt.kapp, tt.adapter)
		text := got.Message + " " + got.Fix
		if got.Status != tt.status || !strings.Contains(text, tt.words) {
			t.Errorf("%s: %+v, want %s with %q", tt.name, got, tt.status, tt.words)
		}
	}
}
