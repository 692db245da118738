package adapter

import (
	"context"
	"fmt"
	"time"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// InstallWith is how the adapter installs a BundleDeployment's content.
type InstallWith string

const (
	// InstallWithApp writes a kapp-controller App (the default).
	InstallWithApp InstallWith = "app"
	// InstallWithPackageInstall publishes the content as a Carvel Package
	// and installs it with a PackageInstall (the serve mode).
	InstallWithPackageInstall InstallWith = "packageinstall"
)

// ParseInstallWith reads the --install-with flag or the annotation.
func ParseInstallWith(s string) (InstallWith, error) {
	switch m := InstallWith(s); m {
	case InstallWithApp, InstallWithPackageInstall:
		return m, nil
	}
	return "", fmt.Errorf("%q is neither %q nor %q", s, InstallWithApp, InstallWithPackageInstall)
}

// installWith is bd's mode: its annotation, else the adapter's default.
func (r *Reconciler) installWith(bd *rukpakv1alpha2.BundleDeployment) (InstallWith, error) {
	v, ok := bd.Annotations[rukpakv1alpha2.AnnotationInstallWith]
	if !ok {
		if r.serve.installDefault == "" {
			return InstallWithApp, nil
		}
		return r.serve.installDefault, nil
	}
	m, err := ParseInstallWith(v)
	if err != nil {
		return "", &translate.UnsupportedError{Reason: fmt.Sprintf("annotation %s: %v", rukpakv1alpha2.AnnotationInstallWith, err)}
	}
	return m, nil
}

// installBy runs the install steps of bd's mode.
func (r *Reconciler) installBy(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts) (time.Duration, error, error) {
	mode, err := r.installWith(bd)
	switch {
	case err != nil:
		return 0, err, nil
	case mode == InstallWithPackageInstall:
		return r.installPackage(ctx, bd, facts)
	}
	return r.installApp(ctx, bd, facts)
}

// installApp is the App mode. A PackageInstall left from the serve mode
// goes first, leaving what it installed in place for the App to adopt.
func (r *Reconciler) installApp(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts) (time.Duration, error, error) {
	gone, err := r.leavePackageInstall(ctx, bd)
	if err != nil || !gone {
		return 0, err, nil
	}
	return r.install(ctx, bd, facts)
}
