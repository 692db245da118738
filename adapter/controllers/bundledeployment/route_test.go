package bundledeployment

import (
	"errors"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	app, serve := scope.InstallWithApp, scope.InstallWithPackageInstall
	for _, tt := range []struct {
		name string
		f    Situation
		want Route
	}{
		{"another class, never touched", Situation{Mode: app}, Skip},
		{"another class, being deleted, no finalizer", Situation{Deleting: true, Mode: app}, Skip},
		{"class changed away, finalizer held", Situation{HasFinalizer: true, Mode: app}, HandBack},
		{"class changed away while being deleted: handed back, not deleted", Situation{Deleting: true, HasFinalizer: true, Mode: serve}, HandBack},
		{"class changed away with an invalid annotation", Situation{HasFinalizer: true, ModeInvalid: true}, HandBack},
		{"claimed, being deleted, finalizer held", Situation{Claimed: true, Deleting: true, HasFinalizer: true, Mode: app}, Remove},
		{"claimed, being deleted in the serve mode", Situation{Claimed: true, Deleting: true, HasFinalizer: true, Mode: serve}, Remove},
		{"claimed, being deleted with an invalid annotation", Situation{Claimed: true, Deleting: true, HasFinalizer: true, ModeInvalid: true}, Remove},
		{"claimed, being deleted, finalizer already gone", Situation{Claimed: true, Deleting: true, Mode: app}, Skip},
		{"claimed, new", Situation{Claimed: true, Mode: app}, InstallApp},
		{"claimed, installed", Situation{Claimed: true, HasFinalizer: true, Mode: app}, InstallApp},
		{"claimed, serve mode", Situation{Claimed: true, HasFinalizer: true, Mode: serve}, InstallServe},
		{"claimed, invalid annotation", Situation{Claimed: true, ModeInvalid: true}, InstallInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Decide(tt.f); got != tt.want {
				t.Errorf("Decide(%+v) = %s, want %s", tt.f, got, tt.want)
			}
		})
	}
}

func TestInstallWith(t *testing.T) {
	t.Parallel()
	with := func(v string) *rukpakv1alpha2.BundleDeployment {
		bd := &rukpakv1alpha2.BundleDeployment{}
		if v != "-" {
			bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationInstallWith: v}
		}
		return bd
	}
	for _, tt := range []struct {
		name, annotation string
		def              scope.InstallWith
		want             scope.InstallWith
		unsupported      bool
	}{
		{"no annotation, no default", "-", "", scope.InstallWithApp, false},
		{"no annotation, serve by default", "-", scope.InstallWithPackageInstall, scope.InstallWithPackageInstall, false},
		{"the annotation wins", "app", scope.InstallWithPackageInstall, scope.InstallWithApp, false},
		{"serve by annotation", "packageinstall", "", scope.InstallWithPackageInstall, false},
		{"unknown mode", "helm", "", "", true},
		{"empty annotation", "", "", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := installWith(with(tt.annotation), tt.def)
			var unsupported *translate.UnsupportedError
			if got != tt.want || errors.As(err, &unsupported) != tt.unsupported {
				t.Errorf("installWith = %q, %v; want %q, unsupported %v", got, err, tt.want, tt.unsupported)
			}
		})
	}
}
