package adapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/contenturl"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/bundle"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/chartcrds"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/drift"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/kappconfig"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorcatalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kappapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks/conversion"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks/crdsafety"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks/ownership"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Options are the adapter process's settings.
type Options struct {
	Config  translate.Config
	Classes Classes
	// InstallWith is how BundleDeployments without the annotation
	// core.rukpak.io/install-with are installed; "" is InstallWithApp.
	InstallWith InstallWith
	// MetricsAddr and ProbeAddr serve metrics and health probes ("0": off).
	MetricsAddr, ProbeAddr string
	LeaderElect            bool
	// WebhookAddr is where the adapter's webhooks listen ("" or "0": off).
	WebhookAddr string
	// Restartable lets a process start the adapter again after stopping
	// it (controller names must otherwise be unique in a process): tests.
	Restartable bool
	// ContentDir keeps the content served at contentURLs (emptied at
	// start); "": a new directory under the OS's temporary directory,
	// removed when the adapter stops.
	ContentDir string
	// ContentMaxBytes bounds what ContentDir holds; 0: DefaultContentMaxBytes.
	ContentMaxBytes int64
	// KappControllerNamespace is where kapp-controller reads its
	// kapp-controller-config, whose CAs and proxies the adapter's own
	// fetches follow; "": none is read, fetches follow the environment.
	KappControllerNamespace string
	// PackagingGlobalNamespace is kapp-controller's
	// -packaging-global-namespace, whose Packages every namespace sees
	// ("": none, as kapp-controller without the flag; the command's default
	// is its release's, packagingapi.DefaultGlobalNamespace).
	PackagingGlobalNamespace string
	// CatalogDir keeps the catalog images OperatorCatalogs publish, as
	// read (one file each, while it is their last), and is cleared of the
	// files a process before left at start; "": a directory of its own
	// under the OS's temporary directory, removed at stop.
	CatalogDir string
	// CatalogSpoolMaxBytes is how much those files may hold together; 0:
	// DefaultCatalogSpoolMaxBytes.
	CatalogSpoolMaxBytes int64
}

// DefaultCatalogSpoolMaxBytes leaves room in the Deployment's 2 GiB
// catalog volume for a spool being written alongside one being let go.
const DefaultCatalogSpoolMaxBytes = 1536 << 20

// DefaultContentMaxBytes is how much content a replica keeps for
// contentURLs unless told otherwise.
const DefaultContentMaxBytes = 512 << 20

// DefaultContentAddress is where contentURLs point unless told otherwise:
// config/webhook's Service in the system namespace, port 443.
func DefaultContentAddress(systemNamespace string) string {
	return "https://" + webhooks.DefaultService + "." + systemNamespace + ".svc"
}

// Scheme knows the kinds the adapter reads and writes.
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rukpakv1alpha1.AddToScheme, rukpakv1alpha2.AddToScheme, kappctrlv1alpha1.AddToScheme,
		packagingv1alpha1.AddToScheme, datav1alpha1.AddToScheme, catalogsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	return scheme, nil
}

// NewManager builds the controller manager that runs the adapter against
// the cluster cfg points at: the command's `run` and the reconciler tests
// start exactly this. Without o.ContentDir the content is kept in a
// directory of its own, and without o.CatalogDir the catalog spools are,
// each removed once the manager has stopped.
func NewManager(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	var made []string
	removeMade := func() error {
		var errs []error
		for _, dir := range made {
			errs = append(errs, os.RemoveAll(dir))
		}
		return errors.Join(errs...)
	}
	for _, d := range []struct {
		dir     *string
		pattern string
	}{{&o.ContentDir, "rukpak-kapp-content-"}, {&o.CatalogDir, "rukpak-kapp-catalogs-"}} {
		if *d.dir != "" {
			continue
		}
		dir, err := os.MkdirTemp("", d.pattern)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("make a directory for the adapter: %w", err), removeMade())
		}
		*d.dir = dir
		made = append(made, dir)
	}
	mgr, err := newManager(cfg, o)
	if err != nil {
		return nil, errors.Join(err, removeMade())
	}
	if len(made) == 0 {
		return mgr, nil
	}
	return removingAtStop{Manager: mgr, dirs: made}, nil
}

func newManager(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	opts, err := managerOptions(o)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create discovery client: %w", err)
	}
	o = withContentAddress(o)
	network := &fetch.NetworkHolder{}
	fetcher := newFetcher(mgr.GetClient(), o.Config.SystemNamespace, network)
	r, content, err := addBundleDeploymentReconciler(mgr, cfg, d, o, network, fetcher)
	if err != nil {
		return nil, err
	}
	if err := addCatalogs(mgr, d, o, network, content.Dependencies()); err != nil {
		return nil, err
	}
	unpacker, err := addServers(mgr, o, fetcher)
	if err != nil {
		return nil, err
	}
	if err := addKappConfig(mgr, o, network, r, content, unpacker); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// managerOptions are the manager's: leader election in the system
// namespace, and a cache of Apps, PackageInstalls, Secrets and ConfigMaps of
// the adapter's own namespaces only, of the installed workloads it judges
// Healthy by, and of kapp-controller-config alone in kapp-controller's
// namespace.
func managerOptions(o Options) (ctrl.Options, error) {
	scheme, err := Scheme()
	if err != nil {
		return ctrl.Options{}, err
	}
	// own are the namespaces the adapter reads Apps, Secrets and ConfigMaps
	// in: the system namespace, and the app namespaces Apps are spread over
	// (with their content Secrets and the copies of what they reference).
	own := map[string]cache.Config{o.Config.SystemNamespace: {}}
	everywhere := map[string]cache.Config{cache.AllNamespaces: {}}
	for _, ns := range o.Config.AppNamespaces {
		own[ns] = cache.Config{}
	}
	byObject := map[client.Object]cache.ByObject{
		// Installed workloads, for Healthy: only what a BundleDeployment
		// installed, in any namespace.
		&appsv1.Deployment{}:  {Namespaces: everywhere, Label: InstalledSelector},
		&appsv1.StatefulSet{}: {Namespaces: everywhere, Label: InstalledSelector},
		&appsv1.DaemonSet{}:   {Namespaces: everywhere, Label: InstalledSelector},
	}
	if ns := o.KappControllerNamespace; ns != "" {
		// kapp-controller-config, and nothing else of kapp-controller's
		// namespace (the adapter may read only that name there).
		only := cache.Config{FieldSelector: fields.OneTermEqualSelector("metadata.name", fetch.KappControllerConfigName)}
		for _, obj := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}} {
			namespaces := maps.Clone(own)
			if _, mine := namespaces[ns]; !mine {
				namespaces[ns] = only
			}
			byObject[obj] = cache.ByObject{Namespaces: namespaces}
		}
	}
	return ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "rukpak-kapp.core.rukpak.io",
		LeaderElectionNamespace: o.Config.SystemNamespace,
		// The process exits as soon as the manager stops, so the lease can be
		// handed over at once: a rollout's new replica takes over without
		// waiting out the lease.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &o.Restartable},
		Cache: cache.Options{
			// The adapter reads Apps, PackageInstalls, Secrets and ConfigMaps
			// in its own namespaces only: what users reference comes from the
			// system namespace, the app namespaces hold only what the adapter
			// writes there. (Default namespaces, not per kind: a kind named
			// here must be served when the manager is made, and the adapter
			// starts without kapp-controller's API.)
			DefaultNamespaces: own,
			ByObject:          byObject,
		},
	}, nil
}

// withContentAddress is o with the address contentURLs name: none when
// webhooks are off (nothing would serve it), else the Service's by default.
func withContentAddress(o Options) Options {
	webhooksOn := o.WebhookAddr != "" && o.WebhookAddr != "0"
	switch {
	case !webhooksOn:
		o.Config.ContentAddress = ""
	case o.Config.ContentAddress == "":
		o.Config.ContentAddress = DefaultContentAddress(o.Config.SystemNamespace)
	}
	return o
}

// addBundleDeploymentReconciler adds the BundleDeployment controller and what opens the
// parts of it that need kapp-controller's API once it is served: the App and
// PackageInstall watches (with drift and stall repair; their wait is the
// adapter's readiness detail).
func addBundleDeploymentReconciler(mgr ctrl.Manager, cfg *rest.Config, d discovery.DiscoveryInterface, o Options, network *fetch.NetworkHolder,
	fetcher store.SourceFetcher) (*BundleDeploymentReconciler, *store.Store, error) {
	apis, err := ServedAPIs(cfg)
	if err != nil {
		return nil, nil, err
	}
	var r *BundleDeploymentReconciler
	kapp := kappapi.New(d, mgr.GetCache(), func(context.Context) error { return withKapp(mgr, r, o, network) },
		func(ctx context.Context) error { return r.EnqueueAll(ctx, mgr.GetCache()) })
	custom, err := customObjects(mgr)
	if err != nil {
		return nil, nil, err
	}
	r, content := assemble(mgr.GetClient(), mgr.GetAPIReader(), o.Config, o.Classes, mgr.GetEventRecorder(fieldowner.Name), apis, o.InstallWith, kapp, fetcher, custom)
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, nil, fmt.Errorf("set up controller: %w", err)
	}
	if err := openWhenServed(mgr, kapp); err != nil {
		return nil, nil, err
	}
	if err := mgr.AddReadyzCheck("kapp-controller-api", kapp.Check); err != nil {
		return nil, nil, err
	}
	return r, content, nil
}

// openWhenServed opens what api guards now if its API is served, or else
// runs api with the manager, to open it once it is.
func openWhenServed(mgr ctrl.Manager, api *kappapi.API) error {
	served, err := api.OpenIfServed(context.Background())
	if err != nil || served {
		return err
	}
	return mgr.Add(api)
}

// addServers adds the webhook server with its webhooks (CRD upgrade
// safety, the ownership of an OperatorInstall's BundleDeployment, the
// conversion) and Bundles on their own,
// whose content it serves.
func addServers(mgr ctrl.Manager, o Options, fetcher store.SourceFetcher) (*bundle.Unpacker, error) {
	srv, err := webhooks.New(mgr, webhooks.DefaultOptions(o.WebhookAddr, o.Config.SystemNamespace))
	if err == nil {
		err = crdsafety.Add(mgr, srv, crdsafety.OptionsFrom(o.Config, o.Classes.Claims))
	}
	if err == nil {
		err = ownership.Add(srv)
	}
	if err == nil {
		err = conversion.Add(srv)
	}
	if err != nil {
		return nil, err
	}
	return addBundleContent(mgr, srv, o, fetcher)
}

// addKappConfig follows kapp-controller-config (unless
// o.KappControllerNamespace is empty) into network; a change wakes, on the
// leader, what failed to unpack, which it may have failed on (another
// replica's controllers would wait for it forever).
func addKappConfig(mgr ctrl.Manager, o Options, network *fetch.NetworkHolder, r *BundleDeploymentReconciler, content *store.Store, unpacker *bundle.Unpacker) error {
	if o.KappControllerNamespace == "" {
		return nil
	}
	requeue := func(ctx context.Context) error {
		select {
		case <-mgr.Elected():
		default:
			return nil
		}
		// Every fetch that failed may pass now: none waits out its
		// backoff.
		content.RetryFetchesNow()
		return errors.Join(r.EnqueueUnpackFailed(ctx, mgr.GetCache()), unpacker.EnqueueUnpackFailed(ctx, mgr.GetCache()))
	}
	return kappconfig.New(mgr.GetCache(), o.KappControllerNamespace, os.Getenv("KUBERNETES_SERVICE_HOST"), network, requeue).SetupWithManager(mgr)
}

// addBundleContent unpacks Bundles on their own (which needs no
// kapp-controller) and serves every contentURL from the webhook server
// (srv; nil when webhooks are off, and then nothing is served), with the
// content kept in o.ContentDir.
func addBundleContent(mgr ctrl.Manager, srv *webhooks.Server, o Options, fetcher store.SourceFetcher) (*bundle.Unpacker, error) {
	limit := o.ContentMaxBytes
	if limit == 0 {
		limit = DefaultContentMaxBytes
	}
	kept, err := contenturl.NewTarballs(o.ContentDir, limit)
	if err != nil {
		return nil, err
	}
	source := bundle.NewURLSource(mgr.GetAPIReader(), fetcher, kept, o.Classes, o.Config.SystemNamespace)
	u := bundle.New(mgr.GetClient(), mgr.GetEventRecorder(fieldowner.Name), source, o.Config.ContentAddress)
	if err := u.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the Bundle controller: %w", err)
	}
	if err := mgr.Add(bundle.NewForgetter(mgr.GetCache(), kept)); err != nil {
		return nil, err
	}
	if srv != nil {
		reviewer := contenturl.KubeReviewer{Client: mgr.GetClient()}
		srv.Register(contenturl.Prefix, contenturl.NewHandler(kept, reviewer, source, ctrl.Log.WithName("content")))
	}
	return u, nil
}

// packagingKinds are kapp-controller's packaging API (aggregated; the CRD
// of its storage, InternalPackages, says when to look again).
var packagingKinds = map[string]string{
	datav1alpha1.SchemeGroupVersion.String(): "packages",
	"internal.packaging.carvel.dev/v1alpha1": "internalpackages",
}

// catalogStatus writes an OperatorCatalog's status, with an Event per
// change of Published: the catalog controller's writer, and ReportWaiting's.
func catalogStatus(mgr ctrl.Manager) operatorcatalog.StatusWriter {
	return kube.ConditionsWriter(mgr.GetClient(), mgr.GetEventRecorder(fieldowner.Name), catalogsv1alpha1.TypePublished)
}

// withKapp starts what needs kapp-controller's API, once it is served: the
// BundleDeployment reconciler's watches of Apps and PackageInstalls, the chart CRD
// controller, drift repair and the stall repair.
func withKapp(mgr ctrl.Manager, r *BundleDeploymentReconciler, o Options, network *fetch.NetworkHolder) error {
	if err := r.WatchKapp(mgr); err != nil {
		return err
	}
	if err := chartcrds.Add(mgr); err != nil {
		return err
	}
	if err := addDriftRepair(mgr, r.AppKey); err != nil {
		return err
	}
	// A run kapp-controller lost is run again.
	if err := mgr.Add(drift.NewStallRepair(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), mgr.GetEventRecorder(fieldowner.Name), o.Config.TemplateTimeout)); err != nil {
		return fmt.Errorf("stall repair: %w", err)
	}
	return nil
}

// addDriftRepair runs the drift repair (package drift) alongside the
// reconciler: kapp-controller never watches what it installed, so without
// it a deleted or edited object stays so until the App's sync period.
func addDriftRepair(mgr ctrl.Manager, appOf func(context.Context, string) (client.ObjectKey, bool)) error {
	meta, err := metadata.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("drift repair: %w", err)
	}
	if err := mgr.Add(drift.New(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), meta, mgr.GetEventRecorder(fieldowner.Name), appOf)); err != nil {
		return fmt.Errorf("drift repair: %w", err)
	}
	return nil
}

// customObjects reads the installed custom resources Healthy is judged by,
// through a cache of their own (installed objects only, stripped to their
// status) that runs with the manager.
func customObjects(mgr ctrl.Manager) (*kube.CustomObjects, error) {
	c, err := kube.NewCustomObjects(mgr.GetConfig(), cache.Options{HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(c.Cache()); err != nil {
		return nil, err
	}
	return c, nil
}
