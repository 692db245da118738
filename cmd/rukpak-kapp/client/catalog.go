package client

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// PublishCatalogDir reads the file-based catalog in dir and publishes it
// (catalog.Publish).
func PublishCatalogDir(ctx context.Context, dir string, opts catalog.Options) (catalog.Published, error) {
	cfg, err := declcfg.LoadFS(ctx, os.DirFS(dir))
	if err != nil {
		return catalog.Published{}, fmt.Errorf("read the catalog in %s: %w", dir, err)
	}
	return catalog.Publish(cfg, opts), nil
}

// PublishCatalogImage pulls a catalog image with the user's registry
// credentials and publishes its file-based catalog a package at a time, as
// the adapter reads an OperatorCatalog's (fetch.SpoolCatalogImage,
// spooled under the OS's temporary directory).
func PublishCatalogImage(ctx context.Context, ref string, opts catalog.Options) (catalog.Published, error) {
	spool, err := fetch.SpoolCatalogImage(ctx, ref, registryOptions(), fetch.CatalogLimits, "", nil)
	if err != nil {
		return catalog.Published{}, err
	}
	defer spool.Close()
	var pub catalog.Published
	p := catalog.NewPublisher(opts)
	for _, name := range spool.Packages() {
		cfg, err := spool.Package(name)
		if err != nil {
			return catalog.Published{}, err
		}
		pub.Add(p.Publish(cfg))
	}
	return pub, nil
}

// CatalogObjects are pub's objects in apply order: each PackageMetadata,
// then the Packages.
func CatalogObjects(pub catalog.Published) []client.Object {
	var objs []client.Object
	for _, m := range pub.Metadata {
		objs = append(objs, m)
	}
	for _, p := range pub.Packages {
		objs = append(objs, p)
	}
	return objs
}

// PushRepository pushes pub's packages as a Carvel package repository to
// repo:tag and returns it pinned by digest. Every Package with an images
// lock in locks gets an imgpkg bundle of its own in repo that holds the
// lock, and fetches it; the repository's images lock lists those bundles.
// With previous (REPO:TAG or REPO@DIGEST) set, every package file of that
// repository the catalog no longer holds is kept, a Package marked
// retracted; kept says how many.
func PushRepository(ctx context.Context, pub catalog.Published, locks map[string]bundlefiles.ImagesLock, repo, tag, previous string) (pinned string, kept int, err error) {
	bundles, err := pushImagesBundles(ctx, repo, pub, locks)
	if err != nil {
		return "", 0, err
	}
	files, err := repositoryFiles(pub)
	if err != nil {
		return "", 0, err
	}
	if previous != "" {
		var lockedBefore []ocibundle.Locked
		kept, lockedBefore, err = keepPrevious(ctx, previous, repo+":"+tag, files)
		if err != nil {
			return "", 0, err
		}
		bundles = append(bundles, lockedBefore...)
	}
	if files[ocibundle.ImagesLockPath], err = repositoryLock(bundles); err != nil {
		return "", 0, err
	}
	pinned, err = pushBundle(ctx, repo, tag, files, "rukpak-kapp catalog push")
	if err != nil {
		return "", 0, err
	}
	return pinned, kept, nil
}

// keepPrevious adds to files every package file of the previous repository
// image that files do not hold (the catalog's own version of a file wins),
// and says how many it kept and what the previous repository locked (the
// images bundles of the Packages it kept, which a copy must carry). A
// Package it keeps is marked retracted in revision (the repository tag
// pushed) unless an earlier push marked it: installs that have it keep it,
// and nothing moves to it.
func keepPrevious(ctx context.Context, ref, revision string, files map[string][]byte) (int, []ocibundle.Locked, error) {
	img, err := fetch.FetchImage(ctx, ref, registryOptions(), fetch.CatalogLimits, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("pull the previous repository %s: %w", ref, err)
	}
	var locked []ocibundle.Locked
	if data, ok := img.Files[ocibundle.ImagesLockPath]; ok {
		if locked, err = ocibundle.ReadImagesLock(data); err != nil {
			return 0, nil, fmt.Errorf("the previous repository %s: %s: %w", ref, ocibundle.ImagesLockPath, err)
		}
	}
	kept := 0
	for name, data := range img.Files {
		if !strings.HasPrefix(name, "packages/") || strings.HasSuffix(name, "/") {
			continue
		}
		if _, ok := files[name]; !ok {
			if path.Base(name) != "metadata.yml" {
				if data, err = markRetracted(data, revision); err != nil {
					return 0, nil, fmt.Errorf("the previous repository %s: %s: %w", ref, name, err)
				}
			}
			files[name] = data
			kept++
		}
	}
	return kept, locked, nil
}

// markRetracted marks the Package file data retracted in revision, unless
// it is marked already.
func markRetracted(data []byte, revision string) ([]byte, error) {
	pkg := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &pkg.Object); err != nil {
		return nil, fmt.Errorf("read the Package: %w", err)
	}
	ann := pkg.GetAnnotations()
	if _, marked := ann[catalog.AnnotationRetracted]; marked {
		return data, nil
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[catalog.AnnotationRetracted] = revision
	pkg.SetAnnotations(ann)
	return yaml.Marshal(pkg.Object)
}

// repositoryFiles lays the packages out as kapp-controller reads a package
// repository: packages/<refName>/metadata.yml and one file per version.
func repositoryFiles(pub catalog.Published) (map[string][]byte, error) {
	files := map[string][]byte{}
	add := func(path string, o client.Object) error {
		data, err := packageFile(o)
		if err != nil {
			return err
		}
		files[path] = data
		return nil
	}
	for _, m := range pub.Metadata {
		if err := add("packages/"+m.Name+"/metadata.yml", m); err != nil {
			return nil, err
		}
	}
	for _, p := range pub.Packages {
		if err := add("packages/"+p.Spec.RefName+"/"+p.Spec.Version+".yml", p); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// packageFile is obj as a YAML document of a package repository, trimmed
// as TrimPackage trims it: as catalog render prints it.
func packageFile(obj client.Object) ([]byte, error) {
	raw, err := Manifest(obj, TrimPackage)
	if err != nil {
		return nil, err
	}
	data, err := yaml.Marshal(raw)
	if err != nil {
		return nil, err
	}
	return append([]byte("---\n"), data...), nil
}
