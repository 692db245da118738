package templates

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

func templated(labels map[string]string) *rukpakv1alpha1.BundleDeployment {
	bd := bdAt(1)
	bd.Spec.Template.Labels = labels
	bd.Spec.Template.Annotations = map[string]string{"note": "kept"}
	return bd
}

// generated is a Bundle as Desired made it, created at minute min.
func generated(bd *rukpakv1alpha1.BundleDeployment, min int) rukpakv1alpha1.Bundle {
	b := *Desired(bd)
	b.CreationTimestamp = metav1.NewTime(t0.Add(timeMinutes(min)))
	return b
}

func TestDesired(t *testing.T) {
	bd := templated(map[string]string{"app": "my-bundle"})
	b := Desired(bd)
	hash := TemplateHash(bd.Spec.Template)
	yes := true
	want := &rukpakv1alpha1.Bundle{
		TypeMeta: metav1.TypeMeta{APIVersion: "core.rukpak.io/v1alpha1", Kind: "Bundle"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "bd-" + hash,
			Labels: map[string]string{"app": "my-bundle", "core.rukpak.io/owner-kind": "BundleDeployment", "core.rukpak.io/owner-name": "bd",
				"core.rukpak.io/bundle-template-hash": hash},
			Annotations: map[string]string{"note": "kept"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "core.rukpak.io/v1alpha1", Kind: "BundleDeployment", Name: "bd", UID: "uid-bd",
				Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: bd.Spec.Template.Spec,
	}
	if d := cmp.Diff(want, b); d != "" {
		t.Errorf("Desired (-want +got):\n%s", d)
	}
	if len(bd.Spec.Template.Labels) != 1 {
		t.Errorf("the template's labels changed: %v", bd.Spec.Template.Labels)
	}
}

func TestGenerate(t *testing.T) {
	bd := templated(nil)
	old := templated(map[string]string{"v": "1"})
	older := templated(map[string]string{"v": "0"})
	foreign := generated(bd, 0)
	foreign.OwnerReferences[0].UID = types.UID("another-incarnation")
	for _, tc := range []struct {
		name     string
		listed   []rukpakv1alpha1.Bundle
		current  string
		create   bool
		blocked  string
		selected int
	}{
		{name: "none yet: make it", create: true},
		{name: "the template's Bundle exists: use it", listed: []rukpakv1alpha1.Bundle{generated(old, 1), generated(bd, 2)}, current: Desired(bd).Name},
		{name: "a Bundle with the hash that bd does not control is not its own", listed: []rukpakv1alpha1.Bundle{foreign}, create: true},
		{name: "three others: a fourth may be made", listed: []rukpakv1alpha1.Bundle{generated(old, 1), generated(older, 0), generated(templated(map[string]string{"v": "2"}), 2)}, create: true},
		{
			name: "four others and none is the template's: blocked with rukpak's message, naming them oldest first",
			listed: []rukpakv1alpha1.Bundle{generated(old, 1), generated(older, 0), generated(templated(map[string]string{"v": "2"}), 2),
				generated(templated(map[string]string{"v": "3"}), 3)},
			blocked: ErrMaxGenerated + ": the BundleDeployment has 4 Bundles (" + Desired(older).Name + ", " + Desired(old).Name,
		},
		{
			name: "at the limit the template's own Bundle is still used (a take-over of a stuck rukpak)",
			listed: []rukpakv1alpha1.Bundle{generated(old, 1), generated(older, 0), generated(templated(map[string]string{"v": "2"}), 2),
				generated(templated(map[string]string{"v": "3"}), 3), generated(bd, 4)},
			current: Desired(bd).Name,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Generate(bd, tc.listed)
			if got := g.Current != nil; got != (tc.current != "") || (got && g.Current.Name != tc.current) {
				t.Errorf("Current = %v, want %q", g.Current, tc.current)
			}
			if got := g.Create != nil; got != tc.create {
				t.Errorf("Create = %v, want %v", g.Create, tc.create)
			} else if got && cmp.Diff(Desired(bd), g.Create) != "" {
				t.Errorf("Create is not the desired Bundle")
			}
			if !strings.HasPrefix(g.Blocked, tc.blocked) || (tc.blocked == "") != (g.Blocked == "") {
				t.Errorf("Blocked = %q, want prefix %q", g.Blocked, tc.blocked)
			}
		})
	}
}

func TestSuperseded(t *testing.T) {
	bd := templated(nil)
	old, current := generated(templated(map[string]string{"v": "1"}), 1), generated(bd, 2)
	going := generated(templated(map[string]string{"v": "0"}), 0)
	going.DeletionTimestamp = &metav1.Time{Time: t0}
	other := generated(bd, 0)
	other.Labels["core.rukpak.io/owner-name"] = "other"
	got := Superseded(bd, []rukpakv1alpha1.Bundle{current, old, going, other}, current.Name)
	if d := cmp.Diff([]string{old.Name}, got); d != "" {
		t.Errorf("Superseded (-want +got):\n%s", d)
	}
	if got := Superseded(bd, []rukpakv1alpha1.Bundle{current}, current.Name); len(got) != 0 {
		t.Errorf("the installed Bundle is never superseded: %v", got)
	}
}

func timeMinutes(n int) time.Duration { return time.Duration(n) * time.Minute }
