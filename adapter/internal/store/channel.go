package store

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// Channel lists the entries of the channel refName that the catalog
// Packages seen from ns publish (ns's own and the global packaging
// namespace's, as kapp-controller shows them), read from the cache of
// their metadata: what a catalog BundleDeployment's UpgradeAvailable
// condition is computed from.
func (s *Store) Channel(ctx context.Context, ns, refName string) ([]catalog.Entry, error) {
	return s.packages.Entries(ctx, ns, refName)
}

// Nodes is the graph of the channel refName seen from ns, for a walk
// along it.
func (s *Store) Nodes(ctx context.Context, ns, refName string) (nodes []catalog.Node, unreadable, err error) {
	return s.packages.Channel(ctx, ns, refName)
}

// Retracted is the revision that retracted bundle from the channel
// refName seen from ns; ok is false when it did not.
func (s *Store) Retracted(ctx context.Context, ns, refName, bundle string) (revision string, ok bool, err error) {
	return s.packages.Retracted(ctx, ns, refName, bundle)
}

// Sees says the catalog Packages seen from ns may include o, a Package.
func (s *Store) Sees(ns string, o client.Object) bool {
	return s.packages.Sees(ns, o)
}
