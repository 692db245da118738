package store

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// Channel lists the entries of the channel refName of the OLM package pkg
// that the catalog Packages in ns publish, read from the cache of their
// metadata (their labels and annotations carry each entry and its edges),
// as dependencies are: what a catalog BundleDeployment's UpgradeAvailable
// condition is computed from.
func (s *Store) Channel(ctx context.Context, ns, pkg, refName string) ([]catalog.Entry, error) {
	list := PackagesMetadataList()
	if err := s.packages.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{catalog.LabelPackage: pkg}); err != nil {
		return nil, fmt.Errorf("list the Packages of %s in namespace %s: %w", refName, ns, err)
	}
	var out []catalog.Entry
	for _, p := range list.Items {
		if e, ok := catalog.EntryOf(p.Labels, p.Annotations); ok && e.RefName == refName {
			out = append(out, e)
		}
	}
	return out, nil
}
