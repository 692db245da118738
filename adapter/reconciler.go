package adapter

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/bundledeployment"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/appmode"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/servemode"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments"
)

// BundleDeploymentReconciler turns BundleDeployments of the claimed classes into Apps.
type BundleDeploymentReconciler = bundledeployment.BundleDeploymentReconciler

// Classes maps each claimed provisioner class to the built-in class it is
// installed as (bundledeployment.Classes).
type Classes = bundledeployment.Classes

// ParseClasses reads the --classes list.
func ParseClasses(entries []string) (Classes, error) { return bundledeployment.ParseClasses(entries) }

// InstallWith is how a BundleDeployment's content is installed.
type InstallWith = scope.InstallWith

// The install modes.
const (
	InstallWithApp            = scope.InstallWithApp
	InstallWithPackageInstall = scope.InstallWithPackageInstall
)

// ParseInstallWith reads the --install-with flag or the annotation.
func ParseInstallWith(s string) (InstallWith, error) { return scope.ParseInstallWith(s) }

// APIs says whether the cluster serves an API, for olm.gvk dependencies.
type APIs = store.APIs

// ServedAPIs asks the API server's discovery, uncached.
func ServedAPIs(cfg *rest.Config) (APIs, error) { return store.ServedAPIs(cfg) }

// digestCacheBytes bounds the images kept unpacked in memory.
const digestCacheBytes = 32 << 20

// NewBundleDeploymentReconciler wires a BundleDeploymentReconciler with both install modes. c reads from
// the informer cache; direct reads from the API server, where the cache may
// lag. classes are the provisioner
// classes it claims; BundleDeployments of other classes are never touched.
// apis answers registry+v1 bundles' olm.gvk dependencies.
func NewBundleDeploymentReconciler(c client.Client, direct client.Reader, cfg translate.Config, classes Classes, recorder events.EventRecorder, apis APIs) *BundleDeploymentReconciler {
	r, _ := assemble(c, direct, cfg, classes, recorder, apis, "", kappInstalled{}, newFetcher(c, cfg.SystemNamespace, nil), nil)
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

func assemble(c client.Client, direct client.Reader, cfg translate.Config, classes Classes, recorder events.EventRecorder, apis APIs,
	installDefault InstallWith, kapp bundledeployment.KappReady, fetcher store.SourceFetcher, custom *kube.CustomObjects) (*BundleDeploymentReconciler, *store.Store) {
	content := store.New(c, cfg, fetcher, apis)
	set := bundledeployment.Settings{Config: cfg, Classes: classes, InstallDefault: installDefault}
	return bundledeployment.New(c, direct, recorder, set, appmode.New(c, direct, content, recorder), servemode.New(c, direct, content), content, kapp, custom).
		WithBundles(deployments.NewV1alpha1(c, recorder, deployments.New(c, direct, recorder), cfg.SystemNamespace, cfg.ContentAddress)), content
}
