package templates

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func stored(class string) *rukpakv1alpha2.BundleDeployment {
	return rukpakv1alpha1.ToV1alpha2(&rukpakv1alpha1.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bd"},
		Spec: rukpakv1alpha1.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha1.OwnClassFor(class), Template: rukpakv1alpha1.BundleTemplate{
			Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: class, Source: rukpakv1alpha1.BundleSource{Type: "http", HTTP: &rukpakv1alpha1.HTTPSource{URL: "http://x/b.tgz"}}},
		}},
	})
}

func TestView(t *testing.T) {
	for _, tc := range []struct {
		name string
		bd   *rukpakv1alpha2.BundleDeployment
		want string
	}{
		{"plain: the system namespace, as rukpak v0.16", stored(rukpakv1alpha1.ClassPlain), "rukpak-system"},
		{"helm: the system namespace, as rukpak v0.16", stored(rukpakv1alpha1.ClassHelm), "rukpak-system"},
		{"registry+v1: none, the conversion chooses", stored(rukpakv1alpha1.ClassRegistry), ""},
		{"v1alpha2: its own", func() *rukpakv1alpha2.BundleDeployment {
			bd := stored(rukpakv1alpha1.ClassPlain)
			bd.Spec.InstallNamespace = "apps"
			return bd
		}(), "apps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.bd.DeepCopy()
			if got := View(tc.bd, "rukpak-system").Spec.InstallNamespace; got != tc.want {
				t.Fatalf("install namespace %q, want %q", got, tc.want)
			}
			if d := cmp.Diff(before, tc.bd); d != "" {
				t.Fatalf("View changed the stored object:\n%s", d)
			}
		})
	}
}

func TestReported(t *testing.T) {
	bd := stored(rukpakv1alpha1.ClassPlain)
	bd.Annotations = map[string]string{rukpakv1alpha1.AnnotationActiveBundle: "bd-1"}
	pinned := rukpakv1alpha1.BundleSource{Type: "git", Git: &rukpakv1alpha1.GitSource{Repository: "https://x", Ref: rukpakv1alpha1.GitRef{Commit: "abc"}}}
	bundle := func(name, phase string, src *rukpakv1alpha1.BundleSource) rukpakv1alpha1.Bundle {
		return rukpakv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: rukpakv1alpha1.BundleStatus{Phase: phase, ResolvedSource: src}}
	}
	want := rukpakv1alpha1.SourceToV1alpha2(pinned)
	for _, tc := range []struct {
		name   string
		bd     *rukpakv1alpha2.BundleDeployment
		listed []rukpakv1alpha1.Bundle
		want   *rukpakv1alpha2.BundleSource
	}{
		{"the active Bundle's source", bd, []rukpakv1alpha1.Bundle{bundle("bd-2", rukpakv1alpha1.PhasePending, nil), bundle("bd-1", rukpakv1alpha1.PhaseUnpacked, &pinned)}, &want},
		{"the active Bundle is gone", bd, []rukpakv1alpha1.Bundle{bundle("bd-2", rukpakv1alpha1.PhaseUnpacked, &pinned)}, nil},
		{"no Bundle is active", stored(rukpakv1alpha1.ClassPlain), []rukpakv1alpha1.Bundle{bundle("bd-1", rukpakv1alpha1.PhaseUnpacked, &pinned)}, nil},
		{"the active Bundle failed since", bd, []rukpakv1alpha1.Bundle{bundle("bd-1", rukpakv1alpha1.PhaseFailing, &pinned)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Reported(tc.bd, tc.listed).Status.ResolvedSource); d != "" {
				t.Fatalf("resolvedSource (-want +got):\n%s", d)
			}
		})
	}
}
