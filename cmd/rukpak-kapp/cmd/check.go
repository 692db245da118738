package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
)

func newCheckCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "check",
		Example: `  # every check, as text
  rukpak-kapp check
  # as JSON, for a script
  rukpak-kapp check -o json`,
		Short: "Say whether the cluster has everything BundleDeployments need, and what to fix",
		Long: "check looks at the cluster of --kubeconfig or $KUBECONFIG, writing nothing (its webhook probe is a dry run), " +
			"and prints one line per check: ok, warn or fail, with the fix. It exits 1 when something a BundleDeployment needs is missing.",
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	namespace := fs.String("system-namespace", "rukpak-system", "rukpak-kapp's system namespace")
	// --namespace was this flag's first name; -n/--namespace now always
	// means the namespace of the objects a command reads or writes.
	fs.StringVar(namespace, "namespace", "rukpak-system", "rukpak-kapp's system namespace")
	_ = fs.MarkDeprecated("namespace", "use --system-namespace")
	output := fs.StringP("output", "o", "text", "output format: "+outputFormats)
	kube := kubeconfigFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*output); err != nil {
			return err
		}
		cfg, err := kube.ToRESTConfig()
		if err != nil {
			return fmt.Errorf("load kubeconfig: %w", err)
		}
		results, err := client.Check(cmd.Context(), cfg, *namespace)
		if err != nil {
			return err
		}
		if err := printChecks(cmd.OutOrStdout(), results, *output); err != nil {
			return err
		}
		for _, r := range results {
			if r.Status == client.CheckFail {
				return errChecksFailed
			}
		}
		return nil
	}
	return cmd
}

// errChecksFailed makes check exit 1 after printing its results.
var errChecksFailed = fmt.Errorf("some checks failed: see their fixes above")

// printChecks prints results in format: a line per check as text, with
// its fix, or the list as JSON or YAML.
func printChecks(out io.Writer, results []client.CheckResult, format string) error {
	if done, err := writeStructured(out, results, format); done {
		return err
	}
	for _, r := range results {
		line := fmt.Sprintf("%-4s  %-22s %s", r.Status, r.Name, r.Message)
		if r.Fix != "" {
			line += "\n      fix: " + r.Fix
		}
		if _, err := fmt.Fprintln(out, line); err != nil {
			return err
		}
	}
	return nil
}
