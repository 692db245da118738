package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/upgradeplan"
	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
)

// errUpgradeRefused makes upgrade plan exit non-zero after printing it.
var errUpgradeRefused = errors.New("the upgrade would stop at a step rukpak-kapp refuses; see the plan above")

func newUpgradeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "upgrade",
		Example: `  # what upgrading PackageInstall prom to its channel's head changes
  rukpak-kapp upgrade plan prom -n operators`,
		Short: "Plan the upgrade of an operator installed from a catalog",
		Args:  cobra.NoArgs,
		RunE:  needsSubcommand,
	}
	cmd.AddCommand(newUpgradePlanCommand())
	return cmd
}

// newUpgradePlanCommand shows, for a PackageInstall of a catalog Package
// that rukpak-kapp installed, what moving it along its channel does, hop by
// hop, writing nothing: the path the walk takes and, for each step, the
// CRDs it changes with the CRD upgrade safety check's verdict (the
// adapter's own check), the RBAC gained and lost, the images that change,
// the install modes and the dependencies it adds.
func newUpgradePlanCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "plan NAME",
		Example: `  # every hop to the highest version the channel reaches
  rukpak-kapp upgrade plan prom -n operators
  # to 2.0.0, as JSON
  rukpak-kapp upgrade plan prom -n operators --to 2.0.0 -o json`,
		Short: "Show what upgrading a catalog install along its channel changes, hop by hop, writing nothing",
		Long: "plan reads the PackageInstall NAME (-n), the BundleDeployment it installed and its channel's Packages from the cluster of " +
			"--kubeconfig or $KUBECONFIG, pulls each bundle of the path with your registry credentials (as docker reads them), and prints " +
			"each hop's changes with the verdicts rukpak-kapp would give. It writes nothing, and exits 1 when a hop would be refused.",
		Args: cobra.ExactArgs(1),
	}
	fs := cmd.Flags()
	namespace := fs.StringP("namespace", "n", "", "the PackageInstall's namespace (default: the kubeconfig context's, as kubectl takes it)")
	to := fs.String("to", "", "the version to plan to (default: the highest version the channel reaches)")
	output := fs.StringP("output", "o", "text", "output format: "+outputFormats)
	kube := kubeconfigFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*output); err != nil {
			return err
		}
		cfg, err := kube.ToRESTConfig()
		if err != nil {
			return fmt.Errorf("load kubeconfig: %w", err)
		}
		ns := *namespace
		if ns == "" {
			if ns, err = kube.Namespace(); err != nil {
				return fmt.Errorf("load kubeconfig: %w", err)
			}
		}
		return upgradePlan(cmd.Context(), cfg, ns, args[0], *to, *output, cmd.OutOrStdout())
	}
	return cmd
}

// upgradePlan prints the plan of the PackageInstall ns/name.
func upgradePlan(ctx context.Context, cfg *rest.Config, ns, name, to, output string, out io.Writer) error {
	plan, err := client.PlanUpgrade(ctx, cfg, ns, name, to)
	if err != nil {
		return err
	}
	if done, err := writeStructured(out, plan, output); err != nil {
		return err
	} else if !done {
		writeUpgradePlan(out, ns, name, plan)
	}
	if plan.Refused() {
		return errUpgradeRefused
	}
	return nil
}

// writeUpgradePlan prints the plan as text, one block per hop.
func writeUpgradePlan(out io.Writer, ns, name string, p *upgradeplan.Plan) {
	fmt.Fprintf(out, "PackageInstall %s/%s (BundleDeployment %s): package %s, channel %s, %s installed\n", ns, name, p.BundleDeployment, p.Package, p.Channel, p.Installed)
	if len(p.Hops) == 0 {
		fmt.Fprintf(out, "nothing to upgrade: %s is the highest version the channel reaches from it\n", p.Installed)
		return
	}
	watched := "all namespaces where the bundle supports it, else its own"
	if len(p.WatchNamespaces) > 0 {
		watched = strings.Join(p.WatchNamespaces, ", ")
	}
	fmt.Fprintf(out, "path to %s: %s (watching: %s)\n", p.To, strings.Join(p.Path, " → "), watched)
	for i, h := range p.Hops {
		verdict := "installs"
		if h.Refused() {
			verdict = "REFUSED: the walk stops here"
		}
		fmt.Fprintf(out, "\nhop %d of %d: %s → %s (%s): %s\n", i+1, len(p.Hops), h.From, h.To, h.Image, verdict)
		if h.Failed != "" {
			fmt.Fprintf(out, "  the adapter cannot fetch or convert this bundle: %s\n", h.Failed)
			continue
		}
		for _, c := range h.CRDs {
			switch {
			case c.Change != "changed":
				fmt.Fprintf(out, "  CRD %s %s", c.Name, c.Change)
			case c.Allowed:
				fmt.Fprintf(out, "  CRD %s changed: allowed by the CRD upgrade safety check", c.Name)
			default:
				fmt.Fprintf(out, "  CRD %s changed: REFUSED by the CRD upgrade safety check", c.Name)
			}
			if c.Verdict != "" {
				fmt.Fprintf(out, " (%s)", c.Verdict)
			}
			fmt.Fprintln(out)
		}
		list := func(what string, items []string) {
			for _, it := range items {
				fmt.Fprintf(out, "  %s: %s\n", what, it)
			}
		}
		list("cluster RBAC gained", h.ClusterRules.Gained)
		list("cluster RBAC lost", h.ClusterRules.Lost)
		list("namespace RBAC gained", h.NamespaceRules.Gained)
		list("namespace RBAC lost", h.NamespaceRules.Lost)
		list("image added", h.Images.Added)
		list("image removed", h.Images.Removed)
		list("dependency added", h.Dependencies)
		if len(h.InstallModes) > 0 {
			fmt.Fprintf(out, "  install modes: %s\n", strings.Join(h.InstallModes, ", "))
		}
	}
}
