package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
)

// newRenderCommand prints what the controller would apply for each
// BundleDeployment, without a cluster: the App, and the content Secrets
// when the adapter fetches the bundle itself (that fetch does reach the
// registry).
func newRenderCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "render -f FILE [-f FILE...] [-o yaml|json]",
		Example: `  # the App and content Secrets of a BundleDeployment
  rukpak-kapp render -f bundledeployment.yaml
  # a Carvel Package, PackageMetadata, values Secret and PackageInstall instead
  rukpak-kapp render -f bundledeployment.yaml --as-package`,
		Short: "Print the App (and content Secrets) the controller would apply, or with --as-package a Carvel Package",
		Long: "render prints the App, and for sources the adapter fetches itself the content Secrets, that the controller " +
			"would apply for each BundleDeployment of the files, without a cluster. With --as-package [--push REPO] " +
			"[--namespace NS] [--installer-rbac] it prints a Carvel Package, PackageMetadata, values Secret and " +
			"PackageInstall that install the bundle. -o json prints one List of all the objects (and notes on stderr).",
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	files := fs.StringArrayP("filename", "f", nil, "file with BundleDeployments (YAML or JSON, several documents allowed; - for stdin); repeatable")
	systemNamespace := fs.String("system-namespace", "rukpak-system", "namespace of the Apps")
	installer := fs.String("installer-service-account", "rukpak-kapp-installer", "ServiceAccount kapp deploys with")
	syncPeriod := fs.Duration("app-sync-period", 10*time.Minute, "App sync period")
	appNamespaces := fs.String("app-namespaces", "", "comma-separated namespaces the Apps are spread over (as `run --app-namespaces`)")
	asPackage := fs.Bool("as-package", false, "print a Carvel Package, PackageMetadata, values Secret and PackageInstall instead of the App")
	pkg := packageFlags(fs)
	output := objectOutputFlag(fs)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		err := checkObjectOutput(*output)
		if err != nil {
			return err
		}
		if len(*files) == 0 {
			return usageError{errors.New("render needs at least one -f")}
		}
		if !*asPackage && pkg.set(fs) {
			return usageError{errors.New("--push, --namespace and --installer-rbac go with --as-package")}
		}
		cfg := translate.Config{SystemNamespace: *systemNamespace, ServiceAccountName: *installer, SyncPeriod: *syncPeriod, AppNamespaces: client.SplitList(*appNamespaces)}
		p := &objectPrinter{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), format: *output}
		if *asPackage {
			err = renderPackages(*files, cfg, pkg, p)
		} else {
			err = renderApps(*files, cfg, p)
		}
		if err != nil {
			return err
		}
		return p.flush()
	}
	return cmd
}

func renderApps(files []string, cfg translate.Config, p *objectPrinter) error {
	for _, name := range files {
		bds, err := readBundleDeployments(name)
		if err != nil {
			return err
		}
		for i := range bds {
			objs, err := client.Render(context.Background(), &bds[i], cfg)
			if err != nil {
				return fmt.Errorf("render %s: %w", bds[i].Name, err)
			}
			for _, o := range objs {
				if err := p.print(o, nil); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

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
	opts := adapter.PackageOptions{Config: cfg, Namespace: *p.namespace, InstallerRBAC: *p.installerRBAC, Now: time.Now()}
	for _, name := range files {
		bds, err := readBundleDeployments(name)
		if err != nil {
			return err
		}
		for i := range bds {
			x, err := client.RenderPackage(ctx, &bds[i], opts, *p.push)
			if err != nil {
				return fmt.Errorf("render %s as a package: %w", bds[i].Name, err)
			}
			for _, n := range x.Notes {
				if err := printer.note(bds[i].Name+": ", n); err != nil {
					return err
				}
			}
			for _, o := range x.Objects {
				if err := printer.print(o, client.TrimPackage); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func readBundleDeployments(name string) ([]rukpakv1alpha2.BundleDeployment, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(data)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []rukpakv1alpha2.BundleDeployment
	for {
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		bd, err := bundleDeploymentOf(doc)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if bd != nil {
			out = append(out, *bd)
		}
	}
}

// bundleDeploymentOf reads a document that is a BundleDeployment of either
// API generation, as its v1alpha2 form (v1alpha1 converted as the
// conversion webhook converts it); nil for any other document.
func bundleDeploymentOf(doc json.RawMessage) (*rukpakv1alpha2.BundleDeployment, error) {
	var tm metav1.TypeMeta
	if len(doc) == 0 || string(doc) == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(doc, &tm); err != nil || tm.Kind != "BundleDeployment" {
		return nil, err
	}
	if tm.APIVersion == rukpakv1alpha1.GroupVersion.String() {
		first := &rukpakv1alpha1.BundleDeployment{}
		if err := json.Unmarshal(doc, first); err != nil {
			return nil, err
		}
		return rukpakv1alpha1.ToV1alpha2(first), nil
	}
	bd := &rukpakv1alpha2.BundleDeployment{}
	return bd, json.Unmarshal(doc, bd)
}
