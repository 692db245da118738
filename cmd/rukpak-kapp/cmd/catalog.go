package cmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
)

// catalogFlags say which catalog and how its packages are named.
type catalogFlags struct {
	dir, image, domain string
	// operatorImages: an images lock holds the operators' images too.
	operatorImages bool
}

func (f *catalogFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "catalog", "", "a directory holding an OLM file-based catalog")
	cmd.Flags().StringVar(&f.image, "image", "", "a catalog image (the catalog under the directory its label "+fetch.CatalogConfigsLabel+" names, as opm builds them); pulled, as every image this command reads or pushes, with your credentials as docker finds them (DOCKER_CONFIG or ~/.docker/config.json, credential helpers included)")
	cmd.Flags().StringVar(&f.domain, "domain", catalog.DefaultDomain, "the domain that ends every refName: <channel>.<package>.<domain>")
}

// bindLock binds the flag that shapes an images lock.
func (f *catalogFlags) bindLock(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.operatorImages, "operator-images", true, "lock the images the operators run (their Deployments' containers, the CSVs' relatedImages, as the catalog lists them or else the bundle's CSV says) as well as the bundle images; false for a team that mirrors them another way")
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
		pub, err = client.PublishCatalogDir(ctx, f.dir, opts)
	default:
		pub, err = client.PublishCatalogImage(ctx, f.image, opts)
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

// lockImages locks the images of pub's Packages (client.LockImages), telling
// errOut, a line each, what could not be locked and why.
func (f *catalogFlags) lockImages(ctx context.Context, pub catalog.Published, errOut io.Writer) (map[string]bundlefiles.ImagesLock, []string) {
	locks, unlocked := client.LockImages(ctx, pub, f.operatorImages)
	for _, line := range unlocked {
		fmt.Fprintln(errOut, line)
	}
	return locks, unlocked
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
			"each bundle of the channel a Package whose App makes an OperatorInstall, which rukpak-kapp installs as a BundleDeployment " +
			"of the bundle's format (registry+v1, or plain for a plain bundle). See docs/catalogs.md.",
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
			all, _ := f.lockImages(cmd.Context(), pub, cmd.ErrOrStderr())
			data, err := client.LockFile(slices.Collect(maps.Values(all))...)
			if err != nil {
				return err
			}
			return writeLock(cmd.OutOrStdout(), data, *output)
		}
		p := &objectPrinter{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), format: *output}
		for _, o := range client.CatalogObjects(pub) {
			if err := p.print(o, client.TrimPackage); err != nil {
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
			locked, unlocked := f.lockImages(cmd.Context(), pub, cmd.ErrOrStderr())
			if len(unlocked) > 0 && !allowUnlocked {
				// A repository whose lock lacks images installs from
				// registries a copy does not carry: nothing is pushed.
				return fmt.Errorf("the repository's images lock would lack %d images or bundles (the lines above; the first: %s), so nothing was pushed: "+
					"let the registries be reached (credentials as for docker pull), or push anyway with --allow-unlocked, "+
					"whose Packages of what is not locked then install from the catalog's registries only and are not carried by imgpkg copy", len(unlocked), unlocked[0])
			}
			pinned, kept, err := client.PushRepository(cmd.Context(), pub, locked, repo, tag, previous)
			if err != nil {
				return err
			}
			if previous != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "kept %d Packages and PackageMetadatas of %s that the catalog no longer holds\n", kept, previous)
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
