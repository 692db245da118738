// Package ocibundle builds OCI images out of files, reproducibly (the same
// files always give the same digest), and pushes them: the release's image
// layers, and imgpkg bundles for Carvel packages (the release's own, and
// those `rukpak-kapp render --as-package --push` and `rukpak-kapp catalog
// push` publish, in Docker's media types as imgpkg push writes them, with
// imgpkg's own images lock type).
//
// It imports nothing of the module; cmd/rukpak-kapp, release and
// adapter/contenturl (whose tarballs are its layers) import it.
package ocibundle
