package bundledeployment

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestParseClasses(t *testing.T) {
	t.Parallel()
	plain, helm := rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassHelm
	for _, tt := range []struct {
		name    string
		in      []string
		want    Classes
		wantErr string
	}{
		{"built-ins", []string{plain, helm}, Classes{plain: plain, helm: helm}, ""},
		{"an alias alongside a built-in", []string{plain, "kapp-plain=" + plain}, Classes{plain: plain, "kapp-plain": plain}, ""},
		{"spaces around the parts", []string{" kapp-helm = " + helm}, Classes{"kapp-helm": helm}, ""},
		{"repeated the same way", []string{plain, plain}, Classes{plain: plain}, ""},
		{"unknown name", []string{"other-class"}, nil, `class "other-class": rukpak-kapp installs`},
		{"alias of an unknown class", []string{"a=b"}, nil, `class "a=b"`},
		{"one name claimed twice", []string{"x=" + plain, "x=" + helm}, nil, "claimed as both"},
		{"nothing", nil, nil, "no provisioner class"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseClasses(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("classes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAsBuiltin(t *testing.T) {
	t.Parallel()
	classes := Classes{rukpakv1alpha2.ClassPlain: rukpakv1alpha2.ClassPlain, "kapp-plain": rukpakv1alpha2.ClassPlain}
	bd := func(class string) *rukpakv1alpha2.BundleDeployment {
		return &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: class}}
	}
	alias := bd("kapp-plain")
	view := classes.asBuiltin(alias)
	if view.Spec.ProvisionerClassName != rukpakv1alpha2.ClassPlain || alias.Spec.ProvisionerClassName != "kapp-plain" {
		t.Errorf("alias: view %q, original %q", view.Spec.ProvisionerClassName, alias.Spec.ProvisionerClassName)
	}
	if builtin := bd(rukpakv1alpha2.ClassPlain); classes.asBuiltin(builtin) != builtin {
		t.Error("a built-in class was copied")
	}
	if !classes.Claims(alias) || classes.Claims(bd(rukpakv1alpha2.ClassHelm)) {
		t.Error("Claims() disagrees with the map")
	}
}
