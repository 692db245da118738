package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// catalogFlags say which catalog and how its packages are named.
type catalogFlags struct {
	dir, image, domain string
	// operatorImages: an images lock holds the operators' images too.
	operatorImages bool
}

func (f *catalogFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "catalog", "", "a directory holding an OLM file-based catalog")
	cmd.Flags().StringVar(&f.image, "image", "", "a catalog image (the catalog under the directory its label "+adapter.CatalogConfigsLabel+" names, as opm builds them); pulled, as every image this command reads or pushes, with your credentials as docker finds them (DOCKER_CONFIG or ~/.docker/config.json, credential helpers included)")
	cmd.Flags().StringVar(&f.domain, "domain", catalog.DefaultDomain, "the domain that ends every refName: <channel>.<package>.<domain>")
}

// bindLock binds the flag that shapes an images lock.
func (f *catalogFlags) bindLock(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.operatorImages, "operator-images", true, "lock the images the operators run (their Deployments' containers, the CSVs' relatedImages, as the catalog lists them or else the bundle's CSV says) beside the bundle images; false for a team that mirrors them another way")
}

// load reads the catalog and publishes it as Carvel packages, telling errOut
// what was refused and why.
func (f *catalogFlags) load(ctx context.Context, namespace string, errOut io.Writer) (catalog.Published, error) {
	var pub catalog.Published
	var err error
	opts := catalog.Options{Domain: f.domain, Namespace: namespace}
	switch {
	case (f.dir == "") == (f.image == ""):
		return catalog.Published{}, usageError{fmt.Errorf("give one of --catalog DIR and --image REF")}
	case f.dir != "":
		pub, err = adapter.PublishCatalogDir(ctx, f.dir, opts)
	default:
		pub, _, err = adapter.PublishCatalogImage(ctx, f.image, registryOptions(), opts)
	}
	if err != nil {
		return catalog.Published{}, err
	}
	for _, r := range pub.Refused {
		fmt.Fprintf(errOut, "refused: %s\n", r)
	}
	if len(pub.Packages) == 0 {
		return pub, fmt.Errorf("the catalog has no bundle that can be published as a Package")
	}
	return pub, nil
}

func newCatalogCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "catalog",
		Example: `  # the Packages of a catalog directory, for kubectl apply
  rukpak-kapp catalog render --catalog ./catalog
  # a package repository kctrl can add
  rukpak-kapp catalog push --catalog ./catalog --repository registry.example.com/operators/repository --tag v1`,
		Short: "Publish an OLM file-based catalog as Carvel packages",
		Long: "Each channel of each OLM package becomes a PackageMetadata and a refName <channel>.<package>.<domain>; " +
			"each bundle of the channel a Package whose App installs the bundle as a registry+v1 BundleDeployment " +
			"through rukpak-kapp. See docs/catalogs.md.",
		Args: cobra.NoArgs,
		RunE: needsSubcommand,
	}
	cmd.AddCommand(newCatalogRenderCommand(), newCatalogPushCommand())
	return cmd
}

func newCatalogRenderCommand() *cobra.Command {
	var f catalogFlags
	var namespace string
	var lock bool
	cmd := &cobra.Command{
		Use: "render (--catalog DIR | --image REF) [--images-lock] [-o yaml|json]",
		Example: `  # the PackageMetadatas and Packages of a catalog directory, applied in namespace operators
  rukpak-kapp catalog render --catalog ./catalog -n operators | kubectl apply -f -
  # the images a push of a catalog image would lock
  rukpak-kapp catalog render --image quay.io/example/catalog:latest --images-lock`,
		Short: "Print the catalog's PackageMetadatas and Packages (for kubectl apply or a PackageRepository's inline fetch), or the images lock a push writes",
		Args:  cobra.NoArgs,
	}
	output := objectOutputFlag(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkObjectOutput(*output); err != nil {
			return err
		}
		pub, err := f.load(cmd.Context(), namespace, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		if lock {
			all, _ := locks(cmd.Context(), pub, f.operatorImages, registryOptions(), cmd.ErrOrStderr())
			data, err := lockFile(slices.Collect(maps.Values(all))...)
			if err != nil {
				return err
			}
			return writeLock(cmd.OutOrStdout(), data, *output)
		}
		p := &objectPrinter{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), format: *output}
		for _, o := range published(pub) {
			if err := p.print(o, trimPackage); err != nil {
				return err
			}
		}
		return p.flush()
	}
	f.bind(cmd)
	f.bindLock(cmd)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the namespace of the objects (none: the namespace they are applied to)")
	cmd.Flags().BoolVar(&lock, "images-lock", false, "print instead the images a push locks (imgpkg's ImagesLock: every bundle image and, unless --operator-images=false, every operator image, by digest, with the reference the catalog names it by as kbld.carvel.dev/id)")
	return cmd
}

func newCatalogPushCommand() *cobra.Command {
	var f catalogFlags
	var repo, tag, previous string
	var allowUnlocked bool
	cmd := &cobra.Command{
		Use: "push (--catalog DIR | --image REF) --repository REPO [--tag TAG] [--previous REPO:TAG] [--allow-unlocked]",
		Example: `  # the first version of a package repository
  rukpak-kapp catalog push --catalog ./catalog --repository registry.example.com/operators/repository --tag v1
  # the next one, keeping every version the first published
  rukpak-kapp catalog push --catalog ./catalog --repository registry.example.com/operators/repository --tag v2 --previous registry.example.com/operators/repository:v1`,
		Short: "Push the catalog's packages as a Carvel package repository (an imgpkg bundle with packages/)",
		Long: "Push the catalog's packages as a Carvel package repository, so that\n" +
			"  kctrl package repository add -r NAME --url REPO:TAG\n" +
			"makes them available with no controller reading the catalog. Prints the repository pinned by digest.\n\n" +
			"Every Package gets an imgpkg bundle of its own in REPO that locks its bundle image and the images its operator\n" +
			"runs, by digest; the repository's lock lists those bundles, so `imgpkg copy -b REPO:TAG --to-repo MIRROR`\n" +
			"carries every image, and installs from the copy run from it (docs/catalogs.md, Air-gapped). An image that cannot be\n" +
			"locked fails the push, naming it, unless --allow-unlocked is given.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if repo == "" {
				return usageError{fmt.Errorf("--repository is required")}
			}
			pub, err := f.load(cmd.Context(), "", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			locked, unlocked := locks(cmd.Context(), pub, f.operatorImages, registryOptions(), cmd.ErrOrStderr())
			if len(unlocked) > 0 && !allowUnlocked {
				// A repository whose lock lacks images installs from
				// registries a copy does not carry: nothing is pushed.
				return fmt.Errorf("the repository's images lock would lack %d images or bundles (the lines above; the first: %s), so nothing was pushed: "+
					"let the registries be reached (credentials as for docker pull), or push anyway with --allow-unlocked, "+
					"whose Packages of what is not locked then install from the catalog's registries only and are not carried by imgpkg copy", len(unlocked), unlocked[0])
			}
			bundles, err := pushImagesBundles(cmd.Context(), repo, pub, locked)
			if err != nil {
				return err
			}
			files, err := repositoryFiles(pub)
			if err != nil {
				return err
			}
			if previous != "" {
				kept, lockedBefore, err := keepPrevious(cmd.Context(), previous, repo+":"+tag, files)
				if err != nil {
					return err
				}
				bundles = append(bundles, lockedBefore...)
				fmt.Fprintf(cmd.ErrOrStderr(), "kept %d Packages and PackageMetadatas of %s that the catalog no longer holds\n", kept, previous)
			}
			if files[ocibundle.ImagesLockPath], err = repositoryLock(bundles); err != nil {
				return err
			}
			pinned, err := pushBundle(cmd.Context(), repo, tag, files, "rukpak-kapp catalog push")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), pinned)
			return err
		},
	}
	f.bind(cmd)
	f.bindLock(cmd)
	cmd.Flags().StringVar(&repo, "repository", "", "the repository to push to (REGISTRY/PATH)")
	cmd.Flags().StringVar(&tag, "tag", "latest", "the tag to push")
	cmd.Flags().BoolVar(&allowUnlocked, "allow-unlocked", false, "push even when an image cannot be locked (not resolved, or a bundle's operator images not read): what is not locked is said on stderr, and its Packages install from the catalog's registries only")
	cmd.Flags().StringVar(&previous, "previous", "", "the repository's previous version (REPO:TAG or REPO@DIGEST): every Package and PackageMetadata it holds that the catalog no longer does is kept, so that no PackageInstall loses the version it installed; a Package kept is marked retracted (annotation "+catalog.AnnotationRetracted+"), so that the adapter moves nothing to it")
	return cmd
}

// published are the objects in apply order: each PackageMetadata, then the
// Packages.
func published(pub catalog.Published) []client.Object {
	var objs []client.Object
	for _, m := range pub.Metadata {
		objs = append(objs, m)
	}
	for _, p := range pub.Packages {
		objs = append(objs, p)
	}
	return objs
}

// keepPrevious adds to files every package file of the previous repository
// image that files do not hold (the catalog's own version of a file wins),
// and says how many it kept and what the previous repository locked (the
// images bundles of the Packages it kept, which a copy must carry). A
// Package it keeps is marked retracted in revision (the repository tag
// pushed) unless an earlier push marked it: installs that have it keep it,
// and nothing moves to it.
func keepPrevious(ctx context.Context, ref, revision string, files map[string][]byte) (int, []ocibundle.Locked, error) {
	img, err := fetch.FetchImage(ctx, ref, registryOptions(), adapter.CatalogLimits, nil)
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
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("read the Package: %w", err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	if _, marked := ann[catalog.AnnotationRetracted]; marked {
		return data, nil
	}
	ann[catalog.AnnotationRetracted] = revision
	return yaml.Marshal(obj)
}

// repositoryFiles lays the packages out as kapp-controller reads a package
// repository: packages/<refName>/metadata.yml and one file per version.
func repositoryFiles(pub catalog.Published) (map[string][]byte, error) {
	files := map[string][]byte{}
	add := func(path string, o client.Object) error {
		var b strings.Builder
		if err := writePackageYAML(&b, o); err != nil {
			return err
		}
		files[path] = []byte(b.String())
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
