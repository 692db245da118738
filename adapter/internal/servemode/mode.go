package servemode

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
)

// Mode is the serve mode.
type Mode struct {
	client client.Client
	// direct reads the packaging API, which the informer cache does not hold.
	direct client.Reader
	store  *store.Store
	// pruned remembers, per BundleDeployment, the packageSet (its key)
	// beside which everything superseded was last removed, so an idle
	// install lists no Packages (an aggregated API call) on every
	// reconcile.
	pruned memo
	// published remembers, per BundleDeployment, the version its current
	// template was published under (keyed by the bundle's own version and
	// the template's content version), so an idle install reads no
	// Package or PackageMetadata either. It is forgotten when the
	// PackageInstall fails, which is how a Package removed by hand shows.
	published memo
}

// New is the serve mode writing through c, reading the packaging API
// through direct and fetching content through s.
func New(c client.Client, direct client.Reader, s *store.Store) *Mode {
	return &Mode{client: c, direct: direct, store: s}
}

// Forget drops what is remembered of name's packaging.
func (m *Mode) Forget(name string, _ types.UID) {
	m.pruned.forget(name)
	m.published.forget(name)
}

// memo keeps one value per BundleDeployment, valid for one key.
type memo struct {
	mu sync.Mutex
	m  map[string][2]string
}

// get is name's value if it was set for key.
func (m *memo) get(name, key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[name]
	return e[1], ok && e[0] == key
}

// set records value for name under key.
func (m *memo) set(name, key, value string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string][2]string{}
	}
	m.m[name] = [2]string{key, value}
}

func (m *memo) forget(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, name)
}

// remembers says whether anything is remembered of name (tests).
func (m *memo) remembers(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.m[name]
	return ok
}
