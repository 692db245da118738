package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// pushedAt is the time of every file and of the image of a pushed bundle,
// so that the same content is always the same digest.
var pushedAt = time.Unix(0, 0).UTC()

// packageOpts are render's flags for --as-package.
type packageOpts struct {
	push          *string
	namespace     *string
	installerRBAC *bool
}

func packageFlags(fs *pflag.FlagSet) packageOpts {
	return packageOpts{
		push:          fs.String("push", "", "with --as-package: publish the bundle's content as an imgpkg bundle to this repository (tagged with the Package version) and have the Package fetch it from there"),
		namespace:     fs.StringP("namespace", "n", "rukpak-system", "with --as-package: the namespace of the Package, PackageMetadata, values Secret and PackageInstall"),
		installerRBAC: fs.Bool("installer-rbac", false, "with --as-package: also print the installer ServiceAccount (in --namespace) bound to cluster-admin"),
	}
}

// set reports whether any --as-package flag was given.
func (p packageOpts) set(fs *pflag.FlagSet) bool {
	return fs.Changed("push") || fs.Changed("namespace") || fs.Changed("installer-rbac")
}

// renderPackages prints, for every BundleDeployment of files, the objects
// that install it through a PackageInstall, its notes first.
func renderPackages(files []string, cfg translate.Config, p packageOpts, printer *objectPrinter) error {
	ctx := context.Background()
	opts := adapter.PackageOptions{Config: cfg, Namespace: *p.namespace, InstallerRBAC: *p.installerRBAC, Now: time.Now(), Keychain: registryKeychain}
	if repo := *p.push; repo != "" {
		opts.Push = func(ctx context.Context, files map[string][]byte, tag string) (string, error) {
			return pushBundle(ctx, repo, tag, files, "rukpak-kapp render --as-package")
		}
	}
	for _, name := range files {
		bds, err := readBundleDeployments(name)
		if err != nil {
			return err
		}
		for i := range bds {
			x, err := adapter.RenderPackage(ctx, &bds[i], opts)
			if err != nil {
				return fmt.Errorf("render %s as a package: %w", bds[i].Name, err)
			}
			for _, n := range x.Notes {
				if err := printer.note(bds[i].Name+": ", n); err != nil {
					return err
				}
			}
			for _, o := range x.Objects {
				if err := printer.print(o, trimPackage); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

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

// writePackageYAML prints obj as YAML, trimmed as trimPackage trims it.
func writePackageYAML(out io.Writer, obj client.Object) error {
	return (&objectPrinter{out: out, format: "yaml"}).print(obj, trimPackage)
}

// trimPackage leaves out the empty fields a Package always carries
// (releasedAt, valuesSchema), which say nothing.
func trimPackage(raw map[string]any) {
	spec, _ := raw["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if spec["releasedAt"] == nil {
		delete(spec, "releasedAt")
	}
	if schema, ok := spec["valuesSchema"].(map[string]any); ok && schema["openAPIv3"] == nil {
		delete(spec, "valuesSchema")
	}
}
