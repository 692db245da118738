package client

import (
	"context"
	"maps"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// registryKeychain gives every registry request the CLI makes itself
// (pulls, digest lookups, pushes) its credentials: the user's own, found
// as docker and imgpkg find them (DOCKER_CONFIG or ~/.docker/config.json,
// its credential helpers included) by go-containerregistry, which this
// CLI never reads by hand. Everything takes it from here, so a pull and a
// push of one command cannot authenticate differently, and a test can
// stand in for it.
var registryKeychain authn.Keychain = authn.DefaultKeychain

// registryOptions reach a registry as the user: with registryKeychain and
// the environment's CAs and proxies.
func registryOptions() fetch.ImageOptions {
	return fetch.ImageOptions{Keychain: registryKeychain}
}

// pushImage writes t, with its blobs, to repo:tag with registryKeychain
// and returns its reference by digest.
func pushImage(ctx context.Context, repo, tag string, t ocibundle.Pushable) (string, error) {
	return ocibundle.Push(ctx, registryKeychain, repo, tag, t)
}

// pushedAt is the time of every file and of the image of a pushed bundle,
// so that the same content is always the same digest.
var pushedAt = time.Unix(0, 0).UTC()

// pushBundle publishes files as an imgpkg bundle at repo:tag; createdBy
// is the command that made it.
func pushBundle(ctx context.Context, repo, tag string, files map[string][]byte, createdBy string) (string, error) {
	files = maps.Clone(files)
	if _, ok := files[ocibundle.ImagesLockPath]; !ok {
		files[ocibundle.ImagesLockPath] = ocibundle.ImagesLock()
	}
	img, err := ocibundle.Bundle(files, ocibundle.BundleOptions{Created: pushedAt, CreatedBy: createdBy})
	if err != nil {
		return "", err
	}
	return pushImage(ctx, repo, tag, img)
}
