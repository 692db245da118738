package deployments

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

func TestNewsOfBundle(t *testing.T) {
	t.Parallel()
	hvb := func(s metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: rukpakv1alpha1.TypeHasValidBundle, Status: s, Reason: reason}}
	}
	for _, tc := range []struct {
		name          string
		before, after []metav1.Condition
		want          bool
	}{
		{"the first wait for a Bundle is held", nil, hvb("True", "UnpackPending"), false},
		{"the first unpack is held with the install", hvb("True", "UnpackPending"), hvb("True", "UnpackSuccessful"), false},
		{"a failure is news at once", nil, hvb("False", "UnpackFailed"), true},
		{"no Bundle could be made", nil, hvb("Unknown", "ReconcileFailed"), true},
		{"a new template's Bundle", hvb("True", "UnpackSuccessful"), hvb("True", "UnpackPending"), true},
		{"a failure fixed", hvb("False", "UnpackFailed"), hvb("True", "UnpackPending"), true},
		{"unchanged", hvb("True", "UnpackSuccessful"), hvb("True", "UnpackSuccessful"), false},
		{"nothing computed", hvb("True", "UnpackSuccessful"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := newsOfBundle(tc.before, tc.after); got != tc.want {
				t.Errorf("newsOfBundle = %v, want %v", got, tc.want)
			}
		})
	}
}
