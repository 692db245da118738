package main

import (
	"context"
	"fmt"
	"github.com/google/go-containerregistry/pkg/authn"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// buildAndPushImage builds the binary for every platform, assembles the
// index and pushes it as REGISTRY/rukpak-kapp:VERSION. It returns the
// reference by digest.
func buildAndPushImage(ctx context.Context, o *options, info buildInfo) (string, error) {
	dir, err := os.MkdirTemp("", "rukpak-kapp-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	binaries := map[platform][]byte{}
	for _, p := range o.platforms {
		bin, err := buildBinary(ctx, o.root, dir, p, info)
		if err != nil {
			return "", err
		}
		if binaries[p], err = os.ReadFile(bin); err != nil {
			return "", err
		}
	}
	idx, err := imageIndex(o.platforms, binaries, info)
	if err != nil {
		return "", err
	}
	return ocibundle.Push(ctx, authn.DefaultKeychain, o.registry+"/rukpak-kapp", info.Version, idx)
}

// imageIndex is the multi-platform image of the given binaries. It is a
// function of its inputs only: the same binaries and build info give the
// same digest.
func imageIndex(platforms []platform, binaries map[platform][]byte, info buildInfo) (v1.ImageIndex, error) {
	base, err := ocibundle.Layer(baseFiles(), info.Created)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := platformImage(base, binaries[p], p, info)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}},
		})
	}
	return mutate.Annotations(idx, info.annotations("rukpak-kapp")).(v1.ImageIndex), nil
}

func platformImage(base v1.Layer, binary []byte, p platform, info buildInfo) (v1.Image, error) {
	bin, err := ocibundle.Layer(map[string]ocibundle.File{binPath: {Mode: 0o755, Data: binary}}, info.Created)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: info.Created}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "rukpak-kapp release: users and CA certificates"}},
		mutate.Addendum{Layer: bin, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "rukpak-kapp release: " + binPath}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = p.OS, p.Arch, created
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", imageUID, imageGID),
		Entrypoint: []string{binPath},
		Env:        []string{"PATH=/usr/local/bin"},
		WorkingDir: "/",
		Labels:     info.annotations("rukpak-kapp"),
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, info.annotations("rukpak-kapp")).(v1.Image), nil
}
