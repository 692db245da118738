// Command release builds rukpak-kapp's container image and its release
// without a container runtime (make image, make release):
//
//	go run ./release image   -registry R [-version V] [-platforms linux/amd64,linux/arm64]
//	go run ./release release -registry R [-version V] [-platforms ...] [-out bin/release]
//	go run ./release binaries [-version V] [-platforms ...] [-out bin/release]
//
// image pushes R/rukpak-kapp:V, an OCI image index. release also writes the
// manifest of config/default with that image pinned by digest, pushes the
// Carvel package's imgpkg bundle (R/rukpak-kapp-package:V) and a package
// repository bundle holding it (R/rukpak-kapp-repo:V), and writes the
// Package, PackageMetadata and PackageRepository alongside the manifest.
// binaries only builds the image's binaries, as image would, into -out.
// Registry credentials come from the Docker config (~/.docker/config.json).
//
// It may import ocibundle only; nothing imports it.
package main
