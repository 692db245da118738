package adapter

import (
	"context"
	"fmt"
	"os"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
)

// CatalogConfigsLabel names the directory of a catalog image that holds its
// file-based catalog (fetch.CatalogConfigsLabel).
const CatalogConfigsLabel = fetch.CatalogConfigsLabel

// CatalogLimits bound a catalog image (fetch.CatalogLimits).
var CatalogLimits = fetch.CatalogLimits

// LoadCatalogDir reads the file-based catalog in dir.
func LoadCatalogDir(ctx context.Context, dir string) (*declcfg.DeclarativeConfig, error) {
	cfg, err := declcfg.LoadFS(ctx, os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("read the catalog in %s: %w", dir, err)
	}
	return cfg, nil
}

// LoadCatalogImage pulls a catalog image and reads its file-based catalog
// (fetch.CatalogImage); it returns the image pinned by digest too.
func LoadCatalogImage(ctx context.Context, ref string, opts fetch.ImageOptions) (*declcfg.DeclarativeConfig, string, error) {
	return fetch.CatalogImage(ctx, ref, opts, fetch.CatalogLimits)
}
