package scope

import "fmt"

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
