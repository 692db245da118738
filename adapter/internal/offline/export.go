package offline

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-containerregistry/pkg/authn"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// maxInline bounds the files a Package carries in itself: the Package is
// one object, stored whole (etcd takes about 1.5 MiB a request).
const maxInline = 1 << 20

// PackageOptions say where the packaging objects go and how the Package
// gets its content.
type PackageOptions struct {
	// Config gives the installer account and the sync period, as for Apps.
	Config translate.Config
	// Namespace holds the Package, its PackageMetadata, the values Secret
	// and the PackageInstall (and so the App it makes).
	Namespace string
	// InstallerRBAC adds the installer account, bound to cluster-admin.
	InstallerRBAC bool
	// Push publishes files as an imgpkg bundle tagged tag and returns its
	// reference by digest; nil keeps the content where the Package can
	// fetch it itself (the source, or inline).
	Push func(ctx context.Context, files map[string][]byte, tag string) (string, error)
	// Now is when webhook certificates of registry+v1 bundles start.
	Now time.Time
	// Keychain gives the credentials of an image source that names no pull
	// secret (the CLI's: the user's own); nil: anonymously.
	Keychain authn.Keychain
}

// PackageExport is what `render --as-package` prints for one
// BundleDeployment.
type PackageExport struct {
	Objects []client.Object
	// Notes say what a user of the objects should know (sorted).
	Notes []string
}

// RenderPackage makes the Carvel packaging objects that install bd's
// content through a PackageInstall. It fetches the content, as Render does
// for what the adapter fetches itself, to find its version, its chart and
// the source pinned to what was fetched; registry+v1 bundles are converted
// here, since kapp-controller cannot convert them.
func RenderPackage(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, opts PackageOptions) (*PackageExport, error) {
	m, err := store.Materialize(ctx, store.SourceFetcher{Reader: NoCluster{}, Namespace: opts.Namespace, Keychain: opts.Keychain}, bd, convert.FreshCertificates(opts.Now))
	if err != nil {
		return nil, err
	}
	files, resolved, laid := m.Files, m.Resolved, m.Layout
	layout := laid.Files
	x := &PackageExport{Notes: laid.Notes}
	chart := map[string][]byte{}
	for name, data := range layout {
		if rest, ok := strings.CutPrefix(name, bundlefiles.ChartDir+"/"); ok {
			chart[rest] = data
		}
	}
	var csv *convert.Package
	if laid.Metadata != nil {
		csv = &laid.Metadata.Package
	}
	identity, schema, err := packaging.IdentityOf(bd, csv, chart)
	if err != nil {
		return nil, err
	}
	var values []byte
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassHelm:
		// The values travel in the values Secret, not in the content.
		values = layout[bundlefiles.ValuesFile]
		delete(layout, bundlefiles.ValuesFile)
	case rukpakv1alpha2.ClassRegistry:
		if holdsSecrets(layout) {
			x.Notes = append(x.Notes, "the converted objects hold Secrets (webhook serving certificates and their keys): whoever can read the Package, or the pushed bundle, can read them")
		}
	}
	version, err := packaging.Version(bd, identity, layout)
	if err != nil {
		return nil, err
	}
	if _, ok := bd.Annotations[rukpakv1alpha2.AnnotationPackageVersion]; !ok && bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassPlain {
		x.Notes = append(x.Notes, fmt.Sprintf("version %s is made from the content's digest: versions made this way do not order, so set the annotation %s to a semver to upgrade by version constraint", version, rukpakv1alpha2.AnnotationPackageVersion))
	}

	pinned := bd.DeepCopy()
	pinned.Spec.Source = *resolved
	// As a new App is made: the template steps are the same whatever the
	// content, and the fetch is replaced.
	app, err := translate.AppInStyle(pinned, opts.Config, nil, translate.StyleAsBundled)
	if err != nil {
		return nil, err
	}
	fetch, chartPath, err := packageFetch(ctx, pinned, app, files, layout, version, opts, x)
	if err != nil {
		return nil, err
	}
	x.Objects = packaging.Objects(packaging.Spec{
		BundleDeployment:   bd,
		Version:            version,
		Identity:           identity,
		Template:           packaging.AppTemplate(app, fetch, chartPath),
		ValuesSchema:       schema,
		Values:             values,
		Namespace:          opts.Namespace,
		ServiceAccountName: app.Spec.ServiceAccountName,
		SyncPeriod:         app.Spec.SyncPeriod,
		InstallerRBAC:      opts.InstallerRBAC,
	})
	sort.Strings(x.Notes)
	return x, nil
}

// packageFetch is where the Package gets its content: a pushed imgpkg
// bundle; else bd's own source, pinned, where kapp-controller can fetch it
// and take it as it is (plain and helm bundles without per-bundle TLS
// trust); else the files inline. It returns the chart's path in what is
// fetched.
func packageFetch(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App, fetched, layout map[string][]byte, version string, opts PackageOptions, x *PackageExport) (kappctrlv1alpha1.AppFetch, string, error) {
	if opts.Push != nil {
		ref, err := opts.Push(ctx, layout, version)
		if err != nil {
			return kappctrlv1alpha1.AppFetch{}, "", fmt.Errorf("push the content of %s: %w", bd.Name, err)
		}
		return kappctrlv1alpha1.AppFetch{ImgpkgBundle: &kappctrlv1alpha1.AppFetchImgpkgBundle{Image: ref}}, bundlefiles.ChartDir, nil
	}
	if sourceFetchable(bd) {
		if bd.Spec.Source.Type == rukpakv1alpha2.SourceTypeHTTP {
			x.Notes = append(x.Notes, fmt.Sprintf("the Package downloads %s when it installs: if what is there changes, so does what version %s installs (--push publishes the content as it is now)", bd.Spec.Source.HTTP.URL, version))
		}
		return app.Spec.Fetch[0], strings.TrimSuffix(bundlefiles.ChartRoot(fetched), "/"), nil
	}
	paths := map[string]string{}
	size := 0
	for p, data := range layout {
		if !utf8.Valid(data) {
			return kappctrlv1alpha1.AppFetch{}, "", fmt.Errorf("%s: file %s is not text, which a Package cannot carry inline: publish the content with --push REPO", bd.Name, p)
		}
		paths[p] = string(data)
		size += len(data)
	}
	if size > maxInline {
		return kappctrlv1alpha1.AppFetch{}, "", fmt.Errorf("%s: the content is %d bytes, more than a Package carries inline (%d): publish it with --push REPO", bd.Name, size, maxInline)
	}
	return kappctrlv1alpha1.AppFetch{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: paths}}, bundlefiles.ChartDir, nil
}

// sourceFetchable reports whether kapp-controller can fetch bd's content
// from its source for a Package and install it as fetched: not a
// registry+v1 bundle (converted first), not ConfigMaps (the system
// namespace's), and no TLS trust of its own (kapp-controller's is the
// cluster's).
func sourceFetchable(bd *rukpakv1alpha2.BundleDeployment) bool {
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassRegistry {
		return false
	}
	src := bd.Spec.Source
	switch {
	case src.Type == rukpakv1alpha2.SourceTypeImage && src.Image != nil:
		return src.Image.CertificateData == "" && !src.Image.InsecureSkipTLSVerify
	case src.Type == rukpakv1alpha2.SourceTypeHTTP && src.HTTP != nil:
		return !src.HTTP.Auth.InsecureSkipVerify
	case src.Type == rukpakv1alpha2.SourceTypeGit && src.Git != nil:
		return !src.Git.Auth.InsecureSkipVerify
	}
	return false
}

// holdsSecrets reports whether any file is a Secret.
func holdsSecrets(files map[string][]byte) bool {
	for _, data := range files {
		var obj struct {
			Kind string `json:"kind"`
		}
		if yaml.Unmarshal(data, &obj) == nil && obj.Kind == "Secret" {
			return true
		}
	}
	return false
}
