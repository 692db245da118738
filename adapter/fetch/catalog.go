package fetch

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// CatalogConfigsLabel names the directory of a catalog image that holds its
// file-based catalog, as opm lays catalog images out.
const CatalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// CatalogLimits bound a catalog image read on a user's machine (rukpak-kapp
// catalog): much larger than a bundle (a catalog of thousands of bundles
// carries every CSV), still finite.
var CatalogLimits = Limits{MaxFileBytes: 512 << 20, MaxTotalBytes: 2 << 30, MaxFiles: 500000, MaxFetchBytes: 2 << 30}

// InClusterCatalogLimits bound a catalog image the adapter reads itself (an
// OperatorCatalog): the image is held in memory twice (its layers, then its
// files) beside everything else the adapter holds, within the 256 MiB its
// Deployment allows. A larger catalog is refused, naming the limit, and is
// published from outside the cluster instead (rukpak-kapp catalog push).
var InClusterCatalogLimits = Limits{MaxFileBytes: 48 << 20, MaxTotalBytes: 48 << 20, MaxFiles: 100000, MaxFetchBytes: 48 << 20}

// CatalogImage pulls a catalog image within limits and reads the
// file-based catalog under the directory its label names (/configs without
// one), with operator-registry's declcfg. It returns the image pinned by
// digest too.
func CatalogImage(ctx context.Context, ref string, opts ImageOptions, limits Limits) (*declcfg.DeclarativeConfig, string, error) {
	img, err := FetchImage(ctx, ref, opts, limits, nil)
	if err != nil {
		return nil, "", fmt.Errorf("pull the catalog image %s: %w", ref, err)
	}
	dir := "configs"
	if l := img.Labels[CatalogConfigsLabel]; l != "" {
		dir = strings.Trim(path.Clean("/"+l), "/")
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
		return nil, "", fmt.Errorf("%w: the image %s holds no catalog under /%s (label %s)", ErrInvalidContent, ref, dir, CatalogConfigsLabel)
	}
	cfg, err := declcfg.LoadFS(ctx, files)
	if err != nil {
		return nil, "", fmt.Errorf("%w: read the catalog of %s: %v", ErrInvalidContent, img.Pinned, err)
	}
	return cfg, img.Pinned, nil
}

// ResolveImage looks ref up and returns it pinned by digest, without
// pulling it: what a catalog that follows a tag asks every poll.
func ResolveImage(ctx context.Context, ref string, opts ImageOptions) (string, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("%w: parse image reference %q: %v", ErrInvalidContent, ref, err)
	}
	transport, err := transportFor(opts, parsed.Context().RegistryStr())
	if err != nil {
		return "", err
	}
	keychain, err := keychainFrom(opts)
	if err != nil {
		return "", err
	}
	desc, err := remote.Head(parsed, remote.WithContext(ctx), remote.WithTransport(transport), remote.WithAuthFromKeychain(keychain))
	if err != nil {
		return "", fmt.Errorf("look up %s: %w", ref, err)
	}
	return parsed.Context().Name() + "@" + desc.Digest.String(), nil
}
