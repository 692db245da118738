package operatorcatalog

import (
	"context"
	"time"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
)

// Images resolves and pulls catalog images; creds is the content of the
// catalog's pull secret (a .dockerconfigjson; nil: anonymous).
type Images interface {
	// Resolve returns ref pinned by digest.
	Resolve(ctx context.Context, ref string, creds []byte) (string, error)
	// Pull reads the catalog of an image pinned by digest.
	Pull(ctx context.Context, pinned string, creds []byte) (Catalog, error)
}

// Catalog is a catalog read, a package at a time (fetch.CatalogSpool).
type Catalog interface {
	// Packages names its packages, sorted.
	Packages() []string
	// Package reads one package: its olm.package, channels, bundles and
	// deprecations.
	Package(name string) (*declcfg.DeclarativeConfig, error)
	// Close lets it go.
	Close() error
}

// Registry reaches images as the adapter reaches bundle images: through
// kapp-controller-config's CAs and proxies (Network; nil: the
// environment's). Dir holds the catalogs read ("": the OS's temporary
// directory), within Budget together (nil: unbounded).
type Registry struct {
	Network *fetch.NetworkHolder
	Dir     string
	Budget  *fetch.SpoolBudget
}

func (r Registry) Resolve(ctx context.Context, ref string, creds []byte) (string, error) {
	return fetch.ResolveImage(ctx, ref, fetch.ImageOptions{Network: r.Network.Load(), DockerConfigJSON: creds})
}

func (r Registry) Pull(ctx context.Context, pinned string, creds []byte) (Catalog, error) {
	return fetch.SpoolCatalogImage(ctx, pinned, fetch.ImageOptions{Network: r.Network.Load(), DockerConfigJSON: creds}, fetch.InClusterCatalogLimits, r.Dir, r.Budget)
}

// Every request to a registry is bounded, so that a registry that does not
// answer fails like one that refuses, and holds a worker no longer: a
// look-up is one small request, a pull streams a whole catalog image.
const (
	ResolveTimeout = 30 * time.Second
	PullTimeout    = 5 * time.Minute
	// workers look catalogs up side by side: a slow registry holds one.
	workers = 4
)

func (r *OperatorCatalogReconciler) resolve(ctx context.Context, ref string, creds []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	defer cancel()
	return r.images.Resolve(ctx, ref, creds)
}

func (r *OperatorCatalogReconciler) pull(ctx context.Context, pinned string, creds []byte) (Catalog, error) {
	ctx, cancel := context.WithTimeout(ctx, PullTimeout)
	defer cancel()
	return r.images.Pull(ctx, pinned, creds)
}
