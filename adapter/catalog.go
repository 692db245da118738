package adapter

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"testing/fstest"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
)

// CatalogConfigsLabel names the directory of a catalog image that holds its
// file-based catalog, as opm lays catalog images out.
const CatalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// CatalogLimits bound a catalog image: much larger than a bundle (a catalog
// of thousands of bundles carries every CSV), still finite.
var CatalogLimits = fetch.Limits{MaxFileBytes: 512 << 20, MaxTotalBytes: 2 << 30, MaxFiles: 500000, MaxFetchBytes: 2 << 30}

// LoadCatalogDir reads the file-based catalog in dir.
func LoadCatalogDir(ctx context.Context, dir string) (*declcfg.DeclarativeConfig, error) {
	cfg, err := declcfg.LoadFS(ctx, os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("read the catalog in %s: %w", dir, err)
	}
	return cfg, nil
}

// LoadCatalogImage pulls a catalog image and reads the file-based catalog
// under the directory its label names (/configs without one). It returns
// the image pinned by digest too.
func LoadCatalogImage(ctx context.Context, ref string, opts fetch.ImageOptions) (*declcfg.DeclarativeConfig, string, error) {
	img, err := fetch.FetchImage(ctx, ref, opts, CatalogLimits, nil)
	if err != nil {
		return nil, "", fmt.Errorf("pull the catalog image %s: %w", ref, err)
	}
	dir := strings.Trim(path.Clean("/"+img.Labels[CatalogConfigsLabel]), "/")
	if img.Labels[CatalogConfigsLabel] == "" {
		dir = "configs"
	}
	// declcfg reads an fs.FS; the image's files are already in memory.
	files := fstest.MapFS{}
	for name, data := range img.Files {
		rel, ok := strings.CutPrefix(strings.TrimPrefix(name, "/"), dir+"/")
		if !ok || rel == "" || strings.HasSuffix(rel, "/") {
			continue
		}
		files[rel] = &fstest.MapFile{Data: data, Mode: 0o444}
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("the image %s holds no catalog under /%s (label %s)", ref, dir, CatalogConfigsLabel)
	}
	cfg, err := declcfg.LoadFS(ctx, files)
	if err != nil {
		return nil, "", fmt.Errorf("read the catalog of %s: %w", img.Pinned, err)
	}
	return cfg, img.Pinned, nil
}
