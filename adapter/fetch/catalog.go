package fetch

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// CatalogConfigsLabel names the directory of a catalog image that holds its
// file-based catalog, as opm lays catalog images out.
const CatalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// CatalogLimits bound a catalog image read on a user's machine (rukpak-kapp
// catalog): much larger than a bundle (a catalog of thousands of bundles
// carries every CSV), still finite.
var CatalogLimits = Limits{MaxFileBytes: 512 << 20, MaxTotalBytes: 2 << 30, MaxFiles: 500000, MaxFetchBytes: 4 << 30}

// InClusterCatalogLimits bound a catalog image the adapter reads itself (an
// OperatorCatalog). The image is streamed and its catalog spooled to disk
// (SpoolCatalogImage), so memory does not bound it: the layers may be as
// large as a catalog on opm's base image gets, the catalog files as large
// as the adapter's spool volume allows (a catalog is kept there while it is
// published, each file of it as large as a one-file catalog of OperatorHub's
// size).
var InClusterCatalogLimits = Limits{MaxFileBytes: 256 << 20, MaxTotalBytes: 512 << 20, MaxFiles: 100000, MaxFetchBytes: 1 << 30}

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
