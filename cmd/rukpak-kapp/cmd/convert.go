package cmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// newConvertCommand converts bundles offline, with the same code the
// controller uses.
func newConvertCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "convert FORMAT",
		Example: `  # a registry+v1 bundle as plain manifests, deployed with kapp
  rukpak-kapp convert registry-v1 ./bundle --install-namespace operators | kapp deploy -a my-operator -f - -y`,
		Short: "Print the plain manifests of a bundle directory, for kapp deploy -f -",
		Args:  cobra.NoArgs,
		RunE:  needsSubcommand,
	}
	cmd.AddCommand(newConvertRegistryV1Command())
	return cmd
}

func newConvertRegistryV1Command() *cobra.Command {
	cmd := &cobra.Command{
		Use: "registry-v1 DIR --install-namespace NS [--watch-namespaces A,B] [-o yaml|json]",
		Example: `  # the operator watching its own namespace
  rukpak-kapp convert registry-v1 ./bundle --install-namespace operators
  # watching every namespace
  rukpak-kapp convert registry-v1 ./bundle --install-namespace operators --watch-namespaces ""`,
		Short: "Print the plain manifests of a registry+v1 bundle directory",
		Args:  cobra.ExactArgs(1),
	}
	installNS := cmd.Flags().String("install-namespace", "", "namespace the operator is installed in (required)")
	watch := cmd.Flags().String("watch-namespaces", "", `comma-separated namespaces the operator watches; --watch-namespaces "" for all namespaces; left out, the bundle's default (all namespaces when it supports that, else its own)`)
	output := objectOutputFlag(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkObjectOutput(*output); err != nil {
			return err
		}
		if *installNS == "" {
			return usageError{errors.New("convert registry-v1 needs --install-namespace")}
		}
		files, err := convert.ReadDir(os.DirFS(args[0]))
		if err != nil {
			return err
		}
		watched := client.SplitList(*watch)
		if cmd.Flags().Changed("watch-namespaces") && len(watched) == 0 {
			// Given and empty: all namespaces, as [""] says to the converter.
			watched = []string{""}
		}
		r, err := convert.Convert(files, convert.Options{InstallNamespace: *installNS, WatchNamespaces: watched})
		if err != nil {
			return err
		}
		p := &objectPrinter{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), format: *output}
		for _, n := range r.Notes {
			if err := p.note("", n); err != nil {
				return fmt.Errorf("write manifests: %w", err)
			}
		}
		for _, o := range r.Objects {
			if err := p.print(o, nil); err != nil {
				return fmt.Errorf("write manifests: %w", err)
			}
		}
		if err := p.flush(); err != nil {
			return fmt.Errorf("write manifests: %w", err)
		}
		return nil
	}
	return cmd
}
