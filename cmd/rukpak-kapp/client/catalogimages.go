package client

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/operator-framework/operator-registry/pkg/registry"
	"golang.org/x/sync/errgroup"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// lookups is how many registry requests a lock makes at once.
const lookups = 8

// LockImages are the images locks of pub's Packages, by Package name: each
// bundle image and, with operator, the images its operator runs, each
// pinned by digest, looked up with the user's registry credentials. What
// cannot be read or resolved is returned as unlocked, a line each, in the
// order it was found: an operator image is left out of its lock; a Package
// whose bundle image cannot be resolved has none (its Package installs
// from the catalog's registries only).
func LockImages(ctx context.Context, pub catalog.Published, operator bool) (_ map[string]bundlefiles.ImagesLock, unlocked []string) {
	opts := registryOptions()
	images := map[string][]string{}
	var unread []string
	for _, p := range pub.Packages {
		imgs := pub.Images[p.Name]
		switch {
		case len(imgs) == 0:
			continue
		case !operator:
			imgs = imgs[:1]
		case len(imgs) == 1:
			// The catalog lists no related image (opm lists them; a
			// hand-written catalog may not): the bundle's CSV says.
			unread = append(unread, imgs[0])
		}
		images[p.Name] = imgs
	}
	fromCSV, failed := each(ctx, unread, "not read: the operator images of bundle", func(ctx context.Context, bundle string) ([]string, error) {
		return csvImages(ctx, bundle, opts)
	})
	unlocked = append(unlocked, failed...)
	var all []string
	for pkg, imgs := range images {
		if operator && len(imgs) == 1 {
			imgs = catalog.ImagesOf(imgs[0], fromCSV[imgs[0]])
			images[pkg] = imgs
		}
		all = append(all, imgs...)
	}
	digests, failed := each(ctx, all, "not locked:", func(ctx context.Context, img string) (string, error) {
		return digestOf(ctx, img, opts)
	})
	unlocked = append(unlocked, failed...)
	out := map[string]bundlefiles.ImagesLock{}
	for _, pkg := range slices.Sorted(maps.Keys(images)) {
		imgs := images[pkg]
		lock := bundlefiles.ImagesLock{Bundle: imgs[0], Images: map[string]string{}}
		for _, img := range imgs {
			if d, ok := digests[img]; ok {
				lock.Images[img] = d
			}
		}
		if lock.Images[lock.Bundle] == "" {
			unlocked = append(unlocked, fmt.Sprintf("not relocatable: Package %s, since its bundle image %s could not be resolved", pkg, lock.Bundle))
			continue
		}
		out[pkg] = lock
	}
	return out, unlocked
}

// each runs f once for every distinct item, lookups at a time, and returns
// what succeeded by item and a line for each failure, what first.
func each[T any](ctx context.Context, items []string, what string, f func(context.Context, string) (T, error)) (map[string]T, []string) {
	items = slices.Compact(slices.Sorted(slices.Values(items)))
	got := make([]T, len(items))
	errs := make([]error, len(items))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(lookups)
	for i, item := range items {
		g.Go(func() error {
			got[i], errs[i] = f(ctx, item)
			return nil
		})
	}
	_ = g.Wait()
	out := map[string]T{}
	var failed []string
	for i, item := range items {
		if errs[i] != nil {
			failed = append(failed, fmt.Sprintf("%s %s: %v", what, item, errs[i]))
			continue
		}
		out[item] = got[i]
	}
	return out, failed
}

// csvImages are the images bundle's CSV runs and relates, as
// operator-registry reads them (opm lists the same as a bundle's related
// images); none for a bundle without a CSV.
func csvImages(ctx context.Context, bundle string, opts fetch.ImageOptions) ([]string, error) {
	img, err := fetch.FetchImage(ctx, bundle, opts, fetch.DefaultLimits, nil)
	if err != nil {
		return nil, err
	}
	for path, data := range img.Files {
		if !strings.HasPrefix(path, "manifests/") {
			continue
		}
		objs, err := convert.DecodeAll(data)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if o.GetKind() != "ClusterServiceVersion" {
				continue
			}
			raw, err := o.MarshalJSON()
			if err != nil {
				return nil, err
			}
			var csv registry.ClusterServiceVersion
			if err := json.Unmarshal(raw, &csv); err != nil {
				return nil, fmt.Errorf("read its ClusterServiceVersion: %w", err)
			}
			related, err := csv.GetRelatedImages()
			if err != nil {
				return nil, fmt.Errorf("read its ClusterServiceVersion's relatedImages: %w", err)
			}
			operator, err := csv.GetOperatorImages()
			if err != nil {
				return nil, fmt.Errorf("read its ClusterServiceVersion's Deployments: %w", err)
			}
			maps.Copy(related, operator)
			return slices.Sorted(maps.Keys(related)), nil
		}
	}
	// A bundle with no ClusterServiceVersion (plain+v0) names no operator
	// image: its own image is all its lock holds.
	return nil, nil
}

// digestOf is img's digest: its own when it is named by digest, else
// looked up in its registry.
func digestOf(ctx context.Context, img string, opts fetch.ImageOptions) (string, error) {
	ref, err := name.ParseReference(img)
	if err != nil {
		return "", err
	}
	if d, ok := ref.(name.Digest); ok {
		return d.DigestStr(), nil
	}
	pinned, err := fetch.ResolveImage(ctx, img, opts)
	if err != nil {
		return "", err
	}
	d, err := name.NewDigest(pinned)
	if err != nil {
		return "", err
	}
	return d.DigestStr(), nil
}

// LockFile is imgpkg's images lock of locks' images, each once: by digest
// in the repository it was locked from, with the reference the bundle
// names it by as kbld's id. One lock makes a Package's images bundle; all
// of a catalog's make catalog render --images-lock.
func LockFile(locks ...bundlefiles.ImagesLock) ([]byte, error) {
	seen := map[string]ocibundle.Locked{}
	for _, lock := range locks {
		for img := range lock.Images {
			ref, err := lock.Ref(img)
			if err != nil {
				return nil, err
			}
			seen[img] = ocibundle.Locked{Image: ref, ID: img}
		}
	}
	locked := make([]ocibundle.Locked, 0, len(seen))
	for _, img := range slices.Sorted(maps.Keys(seen)) {
		locked = append(locked, seen[img])
	}
	return ocibundle.ImagesLockOf(locked...)
}

// pushImagesBundles pushes, for each Package with an images lock, an imgpkg
// bundle that holds only that lock (reproducible: the same images are the
// same bundle, pushed once) into repo, and makes the Package's App fetch it
// (catalog.Relocatable). It returns the bundles, for the repository's lock.
func pushImagesBundles(ctx context.Context, repo string, pub catalog.Published, locks map[string]bundlefiles.ImagesLock) ([]ocibundle.Locked, error) {
	type pending struct {
		img v1.Image
		tag string
		// pkg is the first Package that fetches it, for a failure.
		pkg string
	}
	byRef := map[string]*pending{}
	for _, p := range pub.Packages {
		lock, ok := locks[p.Name]
		if !ok {
			continue
		}
		data, err := LockFile(lock)
		if err != nil {
			return nil, fmt.Errorf("Package %s: %w", p.Name, err)
		}
		img, err := ocibundle.Bundle(map[string][]byte{ocibundle.ImagesLockPath: data}, ocibundle.BundleOptions{Created: pushedAt, CreatedBy: "rukpak-kapp catalog push"})
		if err != nil {
			return nil, err
		}
		d, err := img.Digest()
		if err != nil {
			return nil, err
		}
		ref := repo + "@" + d.String()
		if byRef[ref] == nil {
			// A tag keeps the bundle from a registry's garbage collection.
			byRef[ref] = &pending{img: img, tag: "images-" + d.Hex[:32], pkg: p.Name}
		}
		catalog.Relocatable(p, lock, ref)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(lookups)
	for _, ref := range slices.Sorted(maps.Keys(byRef)) {
		b := byRef[ref]
		g.Go(func() error {
			if _, err := pushImage(gctx, repo, b.tag, b.img); err != nil {
				return fmt.Errorf("the images bundle of Package %s: %w", b.pkg, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []ocibundle.Locked
	for _, ref := range slices.Sorted(maps.Keys(byRef)) {
		out = append(out, ocibundle.Locked{Image: ref, ID: ref})
	}
	return out, nil
}

// repositoryLock is the package repository's images lock: the Packages'
// images bundles, each once (imgpkg copy follows them to their images).
func repositoryLock(bundles []ocibundle.Locked) ([]byte, error) {
	slices.SortFunc(bundles, func(a, b ocibundle.Locked) int { return strings.Compare(a.Image, b.Image) })
	return ocibundle.ImagesLockOf(slices.CompactFunc(bundles, func(a, b ocibundle.Locked) bool { return a.Image == b.Image })...)
}
