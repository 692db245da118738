package adapter

import (
	"context"
	"fmt"
	"maps"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorcatalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kappapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// installKinds are what the OperatorInstall controller needs to run: its
// API (config/catalogs). It reads channels once the packaging API is
// served too, and says, until then, where it needs one.
var installKinds = map[string]string{catalogsv1alpha1.GroupVersion.String(): "operatorinstalls"}

// catalogKinds are what the OperatorCatalog controller and the catalog
// Packages' cache need: the catalog APIs and kapp-controller's packaging
// API.
var catalogKinds = func() map[string]string {
	kinds := maps.Clone(packagingKinds)
	kinds[catalogsv1alpha1.GroupVersion.String()] = "operatorcatalogs,operatorinstalls"
	return kinds
}()

// catalogStack is the catalog controllers and their caches, each opened
// once what it reads is served, at start or later (an adapter without them
// runs everything else): the OperatorInstalls' cache and controller once
// their API is (config/catalogs); the cache of catalog Packages, which
// every reader of them shares (packagingapi.Packages: the installs'
// channels and dependencies, the catalogs' publications and retractions),
// and the OperatorCatalog controller once kapp-controller's packaging API
// is too. One informer per kind, and one rule of what a namespace sees.
type catalogStack struct {
	mgr          ctrl.Manager
	d            discovery.DiscoveryInterface
	o            Options
	network      *fetch.NetworkHolder
	requirements operatorinstall.Cluster
	// installsRead and packagesRead read the two caches once they are
	// made.
	installsRead, packagesRead *kube.LateReader

	mu       sync.Mutex
	installs cache.Cache
	ctl      *operatorinstall.Reconciler
}

// addCatalogs adds what opens the catalog stack as its APIs are served,
// and, while the packaging API is not, says so on the OperatorCatalogs
// (the leader writes). requirements checks catalog bundles' requirements
// against the cluster.
func addCatalogs(mgr ctrl.Manager, d discovery.DiscoveryInterface, o Options, network *fetch.NetworkHolder, requirements operatorinstall.Cluster) error {
	s := &catalogStack{mgr: mgr, d: d, o: o, network: network, requirements: requirements,
		installsRead: kube.NewLateReader("the OperatorInstall API"), packagesRead: kube.NewLateReader("kapp-controller's packaging API (Packages)")}
	installsAPI := kappapi.NewFor(d, mgr.GetCache(), "the OperatorInstall API", installKinds,
		func(ctx context.Context) error { return s.openInstalls(ctx) }, func(context.Context) error { return nil })
	if err := openWhenServed(mgr, installsAPI); err != nil {
		return err
	}
	catalogAPI := kappapi.NewFor(d, mgr.GetCache(), "the catalog APIs", catalogKinds,
		func(ctx context.Context) error { return s.openCatalogs(ctx) }, func(ctx context.Context) error { return s.ctl.EnqueueAll(ctx) })
	catalogAPI.OnWaiting(func(ctx context.Context) {
		select {
		case <-mgr.Elected():
		default:
			return
		}
		err := operatorcatalog.ReportWaiting(ctx, mgr.GetAPIReader(), catalogStatus(mgr))
		if err != nil && !meta.IsNoMatchError(err) {
			ctrl.Log.WithName("catalogs").Error(err, "say on OperatorCatalogs that kapp-controller's packaging API is not served")
		}
	})
	return openWhenServed(mgr, catalogAPI)
}

// openInstalls makes the cache of OperatorInstalls (every namespace) and
// starts their controller, once.
func (s *catalogStack) openInstalls(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctl != nil {
		return nil
	}
	cl, err := cluster.New(s.mgr.GetConfig(), func(co *cluster.Options) {
		co.Scheme = s.mgr.GetScheme()
		co.Cache.DefaultTransform = cache.TransformStripManagedFields()
		co.Cache.ByObject = map[client.Object]cache.ByObject{&catalogsv1alpha1.OperatorInstall{}: {}}
	})
	if err != nil {
		return fmt.Errorf("set up the OperatorInstalls' cache: %w", err)
	}
	if err := s.mgr.Add(cl); err != nil {
		return err
	}
	packages := packagingapi.NewPackages(s.packagesRead, s.mgr.GetAPIReader(), s.o.PackagingGlobalNamespace)
	r := operatorinstall.New(s.mgr.GetClient(), cl.GetCache(), s.mgr.GetAPIReader(), packages, s.requirements,
		operatorinstall.StatusWriter(kube.ConditionsWriter(s.mgr.GetClient(), s.mgr.GetEventRecorder(fieldowner.Name),
			catalogsv1alpha1.TypeInstalled, catalogsv1alpha1.TypeProgressing, catalogsv1alpha1.TypeHeld)),
		s.mgr.GetEventRecorder(fieldowner.Name), s.o.Config.StepHealthTimeout)
	if err := r.SetupWithManager(s.mgr, cl.GetCache()); err != nil {
		return fmt.Errorf("set up the OperatorInstall controller: %w", err)
	}
	s.installs, s.ctl = cl.GetCache(), r
	s.installsRead.Set(cl.GetCache())
	return nil
}

// openCatalogs makes the cache of catalog Packages (the metadata of every
// catalog Package and PackageMetadata: those that name their OLM package,
// an OperatorCatalog's and those of a repository `catalog push` made,
// indexed by channel and OLM package) with the OperatorCatalogs and the
// Namespaces' metadata (whether one sees the global packaging namespace),
// starts the OperatorCatalog controller on it, and has the OperatorInstall
// controller read and watch it.
func (s *catalogStack) openCatalogs(ctx context.Context) error {
	if err := s.openInstalls(ctx); err != nil {
		return err
	}
	o := s.o
	if err := os.MkdirAll(o.CatalogDir, 0o700); err != nil {
		return fmt.Errorf("make the catalog directory: %w", err)
	}
	if err := fetch.RemoveCatalogSpools(o.CatalogDir); err != nil {
		return fmt.Errorf("clear %s: %w", o.CatalogDir, err)
	}
	// The probe runs while an OperatorCatalog exists, as the catalogs'
	// cache (cl, made below, read once the manager runs) lists them.
	var cl cluster.Cluster
	served := operatorcatalog.NewServed(operatorcatalog.DiscoveryProbe(s.d), func(ctx context.Context) bool {
		var cats catalogsv1alpha1.OperatorCatalogList
		return cl.GetCache().List(ctx, &cats) == nil && len(cats.Items) > 0
	})
	cl, err := cluster.New(s.mgr.GetConfig(), func(co *cluster.Options) {
		co.Scheme = s.mgr.GetScheme()
		// What a write of the whole Package recorded of its fields is most
		// of its metadata, and none of the controllers' business.
		co.Cache.DefaultTransform = cache.TransformStripManagedFields()
		// A watch of the packaging API that fails because the API is not
		// available is an outage the catalogs say.
		co.Cache.DefaultWatchErrorHandler = served.WatchErrorHandler
		co.Cache.ByObject = map[client.Object]cache.ByObject{packagingapi.NamespaceMetadata(): {}, &catalogsv1alpha1.OperatorCatalog{}: {}}
		for _, k := range operatorcatalog.PublishedKinds() {
			co.Cache.ByObject[k] = cache.ByObject{Label: packagingapi.CatalogPackagesSelector()}
		}
	})
	if err != nil {
		return fmt.Errorf("set up the catalog Packages' cache: %w", err)
	}
	if err := packagingapi.IndexCatalogPackages(ctx, cl.GetFieldIndexer()); err != nil {
		return err
	}
	if err := s.mgr.Add(cl); err != nil {
		return err
	}
	spoolMax := o.CatalogSpoolMaxBytes
	if spoolMax == 0 {
		spoolMax = DefaultCatalogSpoolMaxBytes
	}
	s.mu.Lock()
	installs, ctl := s.installs, s.ctl
	s.mu.Unlock()
	r := operatorcatalog.New(s.mgr.GetClient(), cl.GetCache(), s.mgr.GetAPIReader(), operatorcatalog.Registry{Network: s.network, Dir: o.CatalogDir, Budget: fetch.NewSpoolBudget(spoolMax)},
		catalogStatus(s.mgr), operatorcatalog.NewInstalls(installs, s.mgr.GetClient(), o.PackagingGlobalNamespace), served)
	if err := s.mgr.Add(served); err != nil {
		return err
	}
	if err := r.SetupWithManager(s.mgr, cl.GetCache(), installs); err != nil {
		return fmt.Errorf("set up the OperatorCatalog controller: %w", err)
	}
	s.packagesRead.Set(cl.GetCache())
	return ctl.WatchPackages(cl.GetCache())
}
