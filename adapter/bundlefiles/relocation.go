package bundlefiles

import (
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// AnnotationImagesLock, on a Package of a package repository that
// `rukpak-kapp catalog push` wrote and on the BundleDeployment its App
// makes, is the images lock the push wrote for the bundle (JSON, an
// ImagesLock): the bundle image and every image its operator runs, each
// with the digest the push resolved. It is how the adapter finds the
// operator's images in a relocated copy of the repository.
const AnnotationImagesLock = "catalog.rukpak-kapp.dev/images-lock"

// ImagesLock is what a push locked of one bundle.
type ImagesLock struct {
	// Bundle is the bundle image as the catalog names it.
	Bundle string `json:"bundle"`
	// Images are the bundle image and the operator's images, each as the
	// catalog or the CSV names it, with its digest (sha256:...).
	Images map[string]string `json:"images"`
}

// Ref is where image is, by digest, in the repository it was locked from.
func (l ImagesLock) Ref(image string) (string, error) {
	d, ok := l.Images[image]
	if !ok {
		return "", fmt.Errorf("the images lock holds no image %s", image)
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", image, err)
	}
	return ref.Context().Name() + "@" + d, nil
}

// String is the annotation's value.
func (l ImagesLock) String() string {
	b, _ := json.Marshal(l)
	return string(b)
}

// ReadImagesLock reads AnnotationImagesLock; nil without one.
func ReadImagesLock(annotations map[string]string) (*ImagesLock, error) {
	v, ok := annotations[AnnotationImagesLock]
	if !ok {
		return nil, nil
	}
	var l ImagesLock
	if err := json.Unmarshal([]byte(v), &l); err != nil || l.Bundle == "" || l.Images[l.Bundle] == "" {
		return nil, fmt.Errorf("the annotation %s cannot be read (it is the images lock `rukpak-kapp catalog push` writes, JSON with the bundle and its images): %q", AnnotationImagesLock, v)
	}
	return &l, nil
}

// RelocatedTo is the repository a relocated copy of the package repository
// holds the lock's images in, given ref, where the BundleDeployment fetches
// the bundle from (kbld set it from the copy's lock): "" when ref is in
// the bundle's own repository, that is, nothing was relocated. imgpkg copy
// puts every image of a bundle into the one repository it copies to, by
// digest, so the bundle's copy says where every other image is. A copy
// whose digest is not the locked one is refused: digests are what the
// push verified.
func (l ImagesLock) RelocatedTo(ref string) (string, error) {
	at, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("the bundle image %s: %w", ref, err)
	}
	orig, err := name.ParseReference(l.Bundle)
	if err != nil {
		return "", fmt.Errorf("the bundle image %s of the images lock: %w", l.Bundle, err)
	}
	if at.Context().Name() == orig.Context().Name() {
		return "", nil
	}
	want := l.Images[l.Bundle]
	if d, ok := at.(name.Digest); !ok || d.DigestStr() != want {
		return "", fmt.Errorf("the bundle image %s is taken from %s, which is not the image the package repository was pushed with (%s): copy the repository with imgpkg copy, which keeps every image's digest", l.Bundle, ref, want)
	}
	return at.Context().Name(), nil
}

// relocations are the operator's images in repo, a relocated copy: each
// locked image but the bundle, as the bundle names it, to repo@digest.
func (l ImagesLock) relocations(repo string) map[string]string {
	out := map[string]string{}
	for image, d := range l.Images {
		if image != l.Bundle {
			out[image] = repo + "@" + d
		}
	}
	return out
}

// Relocations are where the operator of bd runs its images from when bd
// installs a bundle of a relocated package repository (ImagesLock):
// its images as the bundle names them, to their copies. None when bd
// carries no images lock or its bundle is fetched from where the lock
// found it.
func Relocations(bd *rukpakv1alpha2.BundleDeployment) (map[string]string, error) {
	lock, err := ReadImagesLock(bd.Annotations)
	if err != nil || lock == nil || bd.Spec.Source.Image == nil {
		return nil, err
	}
	repo, err := lock.RelocatedTo(bd.Spec.Source.Image.Ref)
	if err != nil || repo == "" {
		return nil, err
	}
	return lock.relocations(repo), nil
}
