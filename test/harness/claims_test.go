package harness

import (
	"os"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestClaims(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "admission", "finalizer_policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	released := &admissionregistrationv1.MutatingAdmissionPolicy{}
	if err := yaml.Unmarshal(raw, released); err != nil {
		t.Fatal(err)
	}
	pointed := &admissionregistrationv1.MutatingAdmissionPolicy{Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "claimed-class", Expression: claimExpression(AliasPlainClass, "kapp-helm")}},
	}}
	for _, tc := range []struct {
		name   string
		policy *admissionregistrationv1.MutatingAdmissionPolicy
		class  string
		want   bool
	}{
		{name: "the release claims rukpak's plain class", policy: released, class: rukpakv1alpha2.ClassPlain, want: true},
		{name: "the release claims rukpak's helm class", policy: released, class: "core-rukpak-io-helm", want: true},
		{name: "the release does not claim an alias", policy: released, class: AliasPlainClass},
		{name: "a policy pointed at aliases claims them", policy: pointed, class: AliasPlainClass, want: true},
		{name: "a policy pointed at aliases leaves rukpak's classes", policy: pointed, class: rukpakv1alpha2.ClassPlain},
		{name: "a class is claimed whole, not as a part of another", policy: released, class: "plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := claims(tc.policy, tc.class); got != tc.want {
				t.Errorf("claims %s: %t, want %t", tc.class, got, tc.want)
			}
		})
	}
}
