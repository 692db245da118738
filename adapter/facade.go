package adapter

import (
	"context"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/packagingapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/appmode"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/controller"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/offline"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/servemode"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// BundleDeploymentReconciler turns BundleDeployments of the claimed classes into Apps.
type BundleDeploymentReconciler = controller.BundleDeploymentReconciler

// Classes maps each claimed provisioner class to the built-in class it is
// installed as (controller.Classes).
type Classes = controller.Classes

// ParseClasses reads the --classes list.
func ParseClasses(entries []string) (Classes, error) { return controller.ParseClasses(entries) }

// InstallWith is how a BundleDeployment's content is installed.
type InstallWith = scope.InstallWith

// The install modes.
const (
	InstallWithApp            = scope.InstallWithApp
	InstallWithPackageInstall = scope.InstallWithPackageInstall
)

// ParseInstallWith reads the --install-with flag or the annotation.
func ParseInstallWith(s string) (InstallWith, error) { return scope.ParseInstallWith(s) }

// Names of what the adapter writes.
const (
	// Finalizer holds a BundleDeployment until everything it installed is gone.
	Finalizer = kube.Finalizer
	// LabelContent marks the content Secrets the adapter fetched.
	LabelContent = store.LabelContent
	// LabelMirror marks copies of referenced Secrets and ConfigMaps.
	LabelMirror = kube.LabelMirror
	// LabelPackageValues marks the values Secrets of served Packages.
	LabelPackageValues = servemode.LabelPackageValues
	// PackagingAPIService is the APIService of kapp-controller's packaging
	// API, which the serve mode and the catalogs write through.
	PackagingAPIService = packagingapi.APIService
	// PackagingGlobalNamespace is the global packaging namespace of
	// kapp-controller's release, whose Packages every namespace sees.
	PackagingGlobalNamespace = packagingapi.DefaultGlobalNamespace
)

// InstalledSelector selects what kapp installed for any BundleDeployment.
var InstalledSelector = kube.InstalledSelector

// APIs says whether the cluster serves an API, for olm.gvk dependencies.
type APIs = store.APIs

// ServedAPIs asks the API server's discovery, uncached.
func ServedAPIs(cfg *rest.Config) (APIs, error) { return store.ServedAPIs(cfg) }

// digestCacheBytes bounds the images kept unpacked in memory.
const digestCacheBytes = 32 << 20

// NewBundleDeploymentReconciler wires a BundleDeploymentReconciler with both install modes. c reads from
// the informer cache; direct reads from the API server, where the cache may
// lag (and catalogs' Packages are read there). classes are the provisioner
// classes it claims; BundleDeployments of other classes are never touched.
// apis answers registry+v1 bundles' olm.gvk dependencies.
func NewBundleDeploymentReconciler(c client.Client, direct client.Reader, cfg translate.Config, classes Classes, recorder events.EventRecorder, apis APIs) *BundleDeploymentReconciler {
	unserved := packagingapi.NewPackages(kube.NewLateReader("kapp-controller's packaging API (Packages)"), direct, "")
	r, _ := assemble(c, direct, unserved, cfg, classes, recorder, apis, "", kappInstalled{}, newFetcher(c, cfg.SystemNamespace, nil), nil)
	return r
}

// kappInstalled stands for a cluster known to serve kapp-controller's API.
type kappInstalled struct{}

func (kappInstalled) Ready() bool { return true }

// newFetcher fetches what the adapter fetches itself, reading Secrets and
// ConfigMaps of the system namespace through c, reaching servers as network
// says (nil: as the environment says).
func newFetcher(c client.Reader, systemNamespace string, network *fetch.NetworkHolder) store.SourceFetcher {
	return store.SourceFetcher{Reader: c, Namespace: systemNamespace, Digests: fetch.NewDigestCache(digestCacheBytes), Network: network}
}

func assemble(c client.Client, direct client.Reader, packages *packagingapi.Packages, cfg translate.Config, classes Classes, recorder events.EventRecorder, apis APIs,
	installDefault InstallWith, kapp controller.KappReady, fetcher store.SourceFetcher, custom *kube.CustomObjects) (*BundleDeploymentReconciler, *store.Store) {
	content := store.New(c, direct, packages, cfg, fetcher, apis)
	set := controller.Settings{Config: cfg, Classes: classes, InstallDefault: installDefault}
	return controller.New(c, direct, recorder, set, appmode.New(c, direct, content, recorder), servemode.New(c, direct, content), content, content, kapp, custom).
		WithBundles(deployments.NewV1alpha1(c, recorder, deployments.New(c, direct, recorder), cfg.SystemNamespace, cfg.ContentAddress)), content
}

// Render returns the objects the controller would apply for bd, offline.
// For a BundleDeployment of rukpak's first API (its v1alpha2 form, without
// an install namespace) that is its template's Bundle too, and its App as
// rukpak v0.16 installed it. An image source that names no pull secret is
// pulled with keychain's credentials (nil: anonymously).
func Render(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, cfg translate.Config, keychain authn.Keychain) ([]runtime.Object, error) {
	if !rukpakv1alpha1.IsV1alpha1(bd) {
		return offline.Render(ctx, bd, cfg, keychain)
	}
	first := rukpakv1alpha1.FromV1alpha2(bd)
	if first.Spec.Template.Spec.Source.Type == rukpakv1alpha1.SourceTypeUpload {
		return nil, deployments.ErrUpload
	}
	objs, err := offline.Render(ctx, templates.View(bd, cfg.SystemNamespace), cfg, keychain)
	if err != nil {
		return nil, err
	}
	return append([]runtime.Object{templates.Desired(first)}, objs...), nil
}

// PackageOptions say where the packaging objects of `render --as-package`
// go and how the Package gets its content.
type PackageOptions = offline.PackageOptions

// PackageExport is what `render --as-package` prints for one BundleDeployment.
type PackageExport = offline.PackageExport

// RenderPackage makes the Carvel packaging objects that install bd's content.
func RenderPackage(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, opts PackageOptions) (*PackageExport, error) {
	return offline.RenderPackage(ctx, templates.View(bd, opts.Config.SystemNamespace), opts)
}

// TakeOverInput reads what takeover.Take decides the take-over of bd from.
func TakeOverInput(ctx context.Context, c client.Reader, mapper meta.RESTMapper, systemNamespace string, bd *rukpakv1alpha2.BundleDeployment, readLive bool) (takeover.Input, error) {
	return offline.TakeOverInput(ctx, c, mapper, store.SourceFetcher{Reader: c, Namespace: systemNamespace}, systemNamespace, bd, readLive)
}
