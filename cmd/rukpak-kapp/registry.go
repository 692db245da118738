package main

import (
	"context"

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
