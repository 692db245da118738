package bundlefiles

import (
	"fmt"
	"strings"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// InvalidError says the fetched content is not a valid bundle of its
// class. Only a new generation or new content can fix it.
type InvalidError struct {
	Reason string
	// Err is the cause from another package (the converter), if any.
	Err error
}

func (e *InvalidError) Error() string {
	switch {
	case e.Err == nil:
		return e.Reason
	case e.Reason == "":
		return e.Err.Error()
	}
	return e.Reason + ": " + e.Err.Error()
}

func (e *InvalidError) Unwrap() error { return e.Err }

func invalid(reason string) error { return &InvalidError{Reason: reason} }

// AdapterFetches reports whether the adapter must fetch bd's content itself.
// kapp-controller can only widen TLS trust for the whole cluster, so a
// per-BundleDeployment CA or skip-verify stays with the adapter; so does an
// image reference vendir would read differently (vendirMisreads).
// registry+v1 bundles are converted by the adapter. Helm bundles are
// fetched by the adapter too: rukpak finds the chart at the root or in a
// single top-level directory, and kapp-controller's helmTemplate needs that
// path before it fetches. Other classes never get here and fail on their
// class before anything is downloaded.
func AdapterFetches(bd *rukpakv1alpha2.BundleDeployment) bool {
	src := bd.Spec.Source
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry:
		return true
	case rukpakv1alpha2.ClassPlain:
		switch {
		case src.Type == rukpakv1alpha2.SourceTypeImage && src.Image != nil:
			return src.Image.CertificateData != "" || src.Image.InsecureSkipTLSVerify || vendirMisreads(src.Image.Ref)
		case src.Type == rukpakv1alpha2.SourceTypeHTTP && src.HTTP != nil:
			return src.HTTP.Auth.InsecureSkipVerify
		case src.Type == rukpakv1alpha2.SourceTypeGit && src.Git != nil:
			return src.Git.Auth.InsecureSkipVerify
		}
	}
	return false
}

// vendirMisreads says vendir would fetch ref from elsewhere than the
// adapter and rukpak do: a reference whose registry is localhost without
// a port (localhost/team/bundle:v1, HTTPS on localhost:443) is read by
// go-containerregistry before v0.22, which vendir v0.41 is built with, as
// the Docker Hub repository localhost/team/bundle. operator-controller's
// test catalog names its bundles so.
func vendirMisreads(ref string) bool {
	first, _, ok := strings.Cut(ref, "/")
	return ok && first == "localhost"
}

// Layout is a bundle laid out for the App.
type Layout struct {
	// Files are what the App reads.
	Files map[string][]byte
	// Metadata is a registry+v1 bundle's identity and dependencies; nil
	// for the other formats.
	Metadata *convert.Metadata
	// Notes say where converted objects differ from the bundle as shipped.
	Notes []string
}

// Lay keeps what the App needs of a bundle the adapter fetched. certs
// serves webhook certificates for registry+v1 bundles.
func Lay(bd *rukpakv1alpha2.BundleDeployment, files map[string][]byte, certs convert.CertSource) (*Layout, error) {
	var out map[string][]byte
	var err error
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassHelm:
		out, err = HelmFiles(bd, files)
	case rukpakv1alpha2.ClassRegistry:
		return RegistryFiles(bd, files, certs)
	case rukpakv1alpha2.ClassPlain:
		out, err = PlainFiles(files)
	default:
		err = fmt.Errorf("provisioner class %q has no bundle layout", bd.Spec.ProvisionerClassName)
	}
	if err != nil {
		return nil, err
	}
	return &Layout{Files: out}, nil
}
