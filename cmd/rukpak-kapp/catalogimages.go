package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/operator-framework/operator-registry/pkg/registry"
	"golang.org/x/sync/errgroup"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// lookups is how many registry requests a lock makes at once.
const lookups = 8

// locker resolves a catalog's images to digests, each once, and says on
// errOut, once per image, what it could not resolve.
type locker struct {
	opts   fetch.ImageOptions
	errOut io.Writer

	mu       sync.Mutex
	digests  map[string]string
	failed   map[string]bool
	operator map[string][]string
}

func newLocker(opts fetch.ImageOptions, errOut io.Writer) *locker {
	return &locker{opts: opts, errOut: errOut, digests: map[string]string{}, failed: map[string]bool{}, operator: map[string][]string{}}
}

// locks are the images locks of pub's Packages, by Package name: each
// bundle image and, with operator, the images its operator runs, each
// pinned by digest. A Package whose bundle image cannot be resolved has
// none (it is said on errOut, and its Package installs from the catalog's
// registries only). An operator image that cannot be resolved is left out
// of its lock, and said.
func (l *locker) locks(ctx context.Context, pub catalog.Published, operator bool) map[string]bundlefiles.ImagesLock {
	if operator {
		// Where the catalog lists no related image (opm lists them; a
		// hand-written catalog may not), the bundle's CSV says: the
		// bundles are read a few at a time.
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(lookups)
		unread := map[string]bool{}
		for _, p := range pub.Packages {
			if imgs := pub.Images[p.Name]; len(imgs) == 1 {
				unread[imgs[0]] = true
			}
		}
		for bundle := range unread {
			g.Go(func() error { l.operatorImages(gctx, bundle); return nil })
		}
		_ = g.Wait()
	}
	images := map[string][]string{}
	for _, p := range pub.Packages {
		imgs := pub.Images[p.Name]
		if len(imgs) == 0 {
			continue
		}
		switch {
		case !operator:
			imgs = imgs[:1]
		case len(imgs) == 1:
			imgs = catalog.ImagesOf(imgs[0], l.operatorImages(ctx, imgs[0]))
		}
		images[p.Name] = imgs
	}
	var all []string
	for _, imgs := range images {
		all = append(all, imgs...)
	}
	slices.Sort(all)
	l.resolve(ctx, slices.Compact(all))
	out := map[string]bundlefiles.ImagesLock{}
	for _, pkg := range slices.Sorted(maps.Keys(images)) {
		imgs := images[pkg]
		lock := bundlefiles.ImagesLock{Bundle: imgs[0], Images: map[string]string{}}
		for _, img := range imgs {
			if d, ok := l.digests[img]; ok {
				lock.Images[img] = d
			}
		}
		if lock.Images[lock.Bundle] == "" {
			fmt.Fprintf(l.errOut, "not relocatable: Package %s, since its bundle image %s could not be resolved\n", pkg, lock.Bundle)
			continue
		}
		out[pkg] = lock
	}
	return out
}

// operatorImages are the images bundle's CSV runs and relates, as
// operator-registry reads them (opm lists the same as a bundle's related
// images); none when the bundle cannot be pulled or read, which is said.
func (l *locker) operatorImages(ctx context.Context, bundle string) []string {
	l.mu.Lock()
	got, ok := l.operator[bundle]
	l.mu.Unlock()
	if ok {
		return got
	}
	imgs, err := csvImages(ctx, bundle, l.opts)
	if err != nil {
		fmt.Fprintf(l.errOut, "not read: the operator images of bundle %s: %v\n", bundle, err)
	}
	l.mu.Lock()
	l.operator[bundle] = imgs
	l.mu.Unlock()
	return imgs
}

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
	return nil, fmt.Errorf("it holds no ClusterServiceVersion under manifests/")
}

// resolve finds the digest of every image, a few at a time: an image named
// by digest is its own; a tag is looked up in its registry.
func (l *locker) resolve(ctx context.Context, images []string) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(lookups)
	for _, img := range images {
		g.Go(func() error {
			d, err := digestOf(ctx, img, l.opts)
			l.mu.Lock()
			defer l.mu.Unlock()
			if err != nil {
				if !l.failed[img] {
					l.failed[img] = true
					fmt.Fprintf(l.errOut, "not locked: %s: %v\n", img, err)
				}
				return nil
			}
			l.digests[img] = d
			return nil
		})
	}
	_ = g.Wait()
}

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

// lockFile is imgpkg's images lock of one Package's images bundle: every
// image of lock by digest in its own repository, with the reference the
// bundle names it by as kbld's id.
func lockFile(lock bundlefiles.ImagesLock) ([]byte, error) {
	var locked []ocibundle.Locked
	for _, img := range slices.Sorted(maps.Keys(lock.Images)) {
		ref, err := lock.Ref(img)
		if err != nil {
			return nil, err
		}
		locked = append(locked, ocibundle.Locked{Image: ref, ID: img})
	}
	return ocibundle.ImagesLockOf(locked...)
}

// pushImagesBundles pushes, for each Package with an images lock, an imgpkg
// bundle that holds only that lock (reproducible: the same images are the
// same bundle, pushed once) into repo, and makes the Package's App fetch it
// (catalog.Relocatable). It returns the bundles, for the repository's lock.
func pushImagesBundles(ctx context.Context, repo string, pub catalog.Published, locks map[string]bundlefiles.ImagesLock) ([]ocibundle.Locked, error) {
	type pending struct {
		img  v1.Image
		tag  string
		pkgs []*datav1alpha1.Package
	}
	byRef := map[string]*pending{}
	for _, p := range pub.Packages {
		lock, ok := locks[p.Name]
		if !ok {
			continue
		}
		data, err := lockFile(lock)
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
			byRef[ref] = &pending{img: img, tag: "images-" + d.Hex[:32]}
		}
		byRef[ref].pkgs = append(byRef[ref].pkgs, p)
		catalog.Relocatable(p, lock, ref)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(lookups)
	for _, ref := range slices.Sorted(maps.Keys(byRef)) {
		b := byRef[ref]
		g.Go(func() error {
			if _, err := ocibundle.Push(gctx, repo, b.tag, b.img); err != nil {
				return fmt.Errorf("the images bundle of Package %s: %w", b.pkgs[0].Name, err)
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

// allImages is one lock of every image of locks, for catalog render.
func allImages(locks map[string]bundlefiles.ImagesLock) ([]byte, error) {
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
	var out []ocibundle.Locked
	for _, img := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[img])
	}
	return ocibundle.ImagesLockOf(out...)
}
