package servemode

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/memo"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
)

// PackageInstaller is the serve mode.
type PackageInstaller struct {
	client client.Client
	// direct reads the packaging API, which the informer cache does not hold.
	direct client.Reader
	// packages writes Packages and PackageMetadata.
	packages packagingapi.Writer
	store    *store.Store
	// pruned remembers, per BundleDeployment, the packageSet (its key)
	// alongside which everything superseded was last removed, so an idle
	// install lists no Packages (an aggregated API call) on every
	// reconcile.
	pruned keyedValue
	// published remembers, per BundleDeployment, the version its current
	// template was published under (keyed by the bundle's own version and
	// the template's content version), so an idle install reads no
	// Package or PackageMetadata either. It is forgotten when the
	// PackageInstall fails, which is how a Package removed by hand shows.
	published keyedValue
}

// New is the serve mode writing through c, reading the packaging API
// through direct and fetching content through s.
func New(c client.Client, direct client.Reader, s *store.Store) *PackageInstaller {
	return &PackageInstaller{client: c, direct: direct, packages: packagingapi.NewWriter(c, direct), store: s}
}

// Forget drops what is remembered of name's packaging.
func (m *PackageInstaller) Forget(name string, _ types.UID) {
	m.pruned.Delete(name)
	m.published.Delete(name)
}

// keyedValue keeps one value per BundleDeployment, valid for one key.
type keyedValue struct{ memo.Keyed[[2]string] }

// get is name's value if it was set for key.
func (m *keyedValue) get(name, key string) (string, bool) {
	e, ok := m.Load(name)
	return e[1], ok && e[0] == key
}

// set records value for name under key.
func (m *keyedValue) set(name, key, value string) { m.Store(name, [2]string{key, value}) }
