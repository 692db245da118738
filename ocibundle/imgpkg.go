package ocibundle

import (
	"context"
	"fmt"
	"maps"
	"time"

	"carvel.dev/imgpkg/pkg/imgpkg/lockconfig"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// bundleLabel marks an OCI image as an imgpkg bundle.
const bundleLabel = "dev.carvel.imgpkg.bundle"

// ImagesLockPath is where an imgpkg bundle lists the images it refers to.
const ImagesLockPath = ".imgpkg/images.yml"

// ImagesLock is imgpkg's lock file for images that are their own ids
// (none is fine: a bundle of manifests only). kbld's id annotation lets a
// package's kbld step swap a reference for the bundle's copy when the
// bundle is relocated (imgpkg copy).
func ImagesLock(images ...string) []byte {
	var locked []Locked
	for _, image := range images {
		locked = append(locked, Locked{Image: image, ID: image})
	}
	// Images by digest only, which every caller passes: the one error
	// AsBytes can return.
	b, err := ImagesLockOf(locked...)
	if err != nil {
		panic(err)
	}
	return b
}

// Locked is one image of a lock: where it is, by digest, and the reference
// the configuration names it by (kbld's id, which kbld replaces with the
// image, or with its copy once imgpkg has relocated the bundle).
type Locked struct {
	Image, ID string
}

// ImagesLockOf writes imgpkg's lock file with imgpkg's own type; an image
// not given by digest is an error.
func ImagesLockOf(images ...Locked) ([]byte, error) {
	lock := lockconfig.NewEmptyImagesLock()
	for _, l := range images {
		lock.AddImageRef(lockconfig.ImageRef{Image: l.Image, Annotations: map[string]string{kbldID: l.ID}})
	}
	if len(images) == 0 {
		// omitempty would leave the key out; imgpkg writes it.
		return []byte("apiVersion: " + lockconfig.ImagesLockAPIVersion + "\nimages: []\nkind: " + lockconfig.ImagesLockKind + "\n"), nil
	}
	return lock.AsBytes()
}

// ReadImagesLock reads imgpkg's lock file: each image and its kbld id.
func ReadImagesLock(data []byte) ([]Locked, error) {
	lock, err := lockconfig.NewImagesLockFromBytes(data)
	if err != nil {
		return nil, err
	}
	out := make([]Locked, 0, len(lock.Images))
	for _, i := range lock.Images {
		id := i.Annotations[kbldID]
		if id == "" {
			id = i.Image
		}
		out = append(out, Locked{Image: i.Image, ID: id})
	}
	return out, nil
}

// kbldID is the annotation kbld matches a reference against.
const kbldID = "kbld.carvel.dev/id"

// BundleOptions describe a bundle image beyond its files.
type BundleOptions struct {
	// Created is the time of the image and of every file in it.
	Created time.Time
	// Annotations go on the manifest and, as labels, on the config.
	Annotations map[string]string
	// CreatedBy is the history entry of its one layer.
	CreatedBy string
}

// Bundle is an imgpkg bundle: an image with one layer of files (mode 0644)
// and the bundle label on its config. The files should hold ImagesLockPath.
func Bundle(files map[string][]byte, o BundleOptions) (v1.Image, error) {
	entries := map[string]File{}
	for name, data := range files {
		entries[name] = File{Mode: 0o644, Data: data}
	}
	l, err := Layer(entries, o.Created)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Created}
	// Docker's media types, as imgpkg push writes a bundle: imgpkg copy
	// reads the lock of a bundle it finds in a lock (a Package's images
	// bundle in a package repository's) only from a Docker layer.
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.DockerManifestSchema2), types.DockerConfigJSON)
	if img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.DockerLayer, History: v1.History{Created: created, CreatedBy: o.CreatedBy}}); err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	labels := maps.Clone(o.Annotations)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[bundleLabel] = "true"
	cf.Config = v1.Config{Labels: labels}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	if len(o.Annotations) == 0 {
		return img, nil
	}
	return mutate.Annotations(img, o.Annotations).(v1.Image), nil
}

// Pushable is an image or an image index.
type Pushable interface {
	remote.Taggable
	Digest() (v1.Hash, error)
}

// Push writes an image or index, with its blobs, to repo:tag with the
// credentials keychain finds and returns its reference by digest. The
// caller names the keychain, so a command that pulls and pushes uses one.
func Push(ctx context.Context, keychain authn.Keychain, repo, tag string, t Pushable) (string, error) {
	ref, err := name.NewTag(repo + ":" + tag)
	if err != nil {
		return "", fmt.Errorf("image name %s:%s: %w", repo, tag, err)
	}
	if err := remote.Push(ref, t, remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain)); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := t.Digest()
	if err != nil {
		return "", fmt.Errorf("the digest of what was pushed to %s: %w", ref, err)
	}
	return repo + "@" + d.String(), nil
}
