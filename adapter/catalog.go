package adapter

import (
	"context"
	"fmt"
	"os"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
)

// CatalogConfigsLabel names the directory of a catalog image that holds its
// file-based catalog (fetch.CatalogConfigsLabel).
const CatalogConfigsLabel = fetch.CatalogConfigsLabel

// CatalogLimits bound a catalog image (fetch.CatalogLimits).
var CatalogLimits = fetch.CatalogLimits

// PublishCatalogDir reads the file-based catalog in dir and publishes it
// (catalog.Publish).
func PublishCatalogDir(ctx context.Context, dir string, opts catalog.Options) (catalog.Published, error) {
	cfg, err := declcfg.LoadFS(ctx, os.DirFS(dir))
	if err != nil {
		return catalog.Published{}, fmt.Errorf("read the catalog in %s: %w", dir, err)
	}
	return catalog.Publish(cfg, opts), nil
}

// PublishCatalogImage pulls a catalog image and publishes its file-based
// catalog a package at a time, as the adapter reads an OperatorCatalog's
// (fetch.SpoolCatalogImage, spooled under the OS's temporary directory); it
// returns the image pinned by digest too.
func PublishCatalogImage(ctx context.Context, ref string, image fetch.ImageOptions, opts catalog.Options) (catalog.Published, string, error) {
	spool, err := fetch.SpoolCatalogImage(ctx, ref, image, fetch.CatalogLimits, "", nil)
	if err != nil {
		return catalog.Published{}, "", err
	}
	defer spool.Close()
	var pub catalog.Published
	p := catalog.NewPublisher(opts)
	for _, name := range spool.Packages() {
		cfg, err := spool.Package(name)
		if err != nil {
			return catalog.Published{}, "", err
		}
		pub.Add(p.Publish(cfg))
	}
	return pub, spool.Pinned, nil
}
