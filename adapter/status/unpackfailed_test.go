package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestUnpackFailed(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: typ, Status: s, Reason: reason}}
	}
	for _, tt := range []struct {
		name  string
		conds []metav1.Condition
		want  bool
	}{
		{"the source could not be fetched", cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed), true},
		{"unpacked", cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionTrue, rukpakv1alpha2.ReasonUnpackSuccessful), false},
		{"still unpacking", cond(rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, "UnpackPending"), false},
		{"an install failed, not the fetch", cond(rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed), false},
		{"no conditions yet", nil, false},
	} {
		if got := UnpackFailed(tt.conds); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
