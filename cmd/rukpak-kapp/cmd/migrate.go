package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
)

// errBlocked makes the command exit non-zero after printing the plan.
var errBlocked = errors.New("some BundleDeployments cannot be taken over in place; see the blockers above")

func newMigrateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "migrate",
		Example: `  # what taking over rukpak's installs will change
  rukpak-kapp migrate plan`,
		Short: "Plan taking over what rukpak v0.24.0 or v0.16.0 installed",
		Args:  cobra.NoArgs,
		RunE:  needsSubcommand,
	}
	cmd.AddCommand(newMigratePlanCommand())
	return cmd
}

// newMigratePlanCommand shows, against the cluster and without writing
// anything, what taking over each BundleDeployment rukpak installed does:
// the same decisions the controller makes.
func newMigratePlanCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "plan",
		Example: `  # every BundleDeployment rukpak installed, as text
  rukpak-kapp migrate plan
  # as YAML, with the classes rukpak-kapp will claim
  rukpak-kapp migrate plan --classes core-rukpak-io-plain,core-rukpak-io-helm -o yaml`,
		Short: "Show what taking over each BundleDeployment rukpak installed will change and what blocks it, writing nothing",
		Long: "plan shows, against the cluster of --kubeconfig or $KUBECONFIG and writing nothing, what taking over each " +
			"BundleDeployment rukpak v0.24.0 (v1alpha2) or rukpak v0.16.0 (v1alpha1, with or without rukpak-kapp's CRDs applied) installed will change and what blocks it. It exits 1 when something blocks.",
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	systemNamespace := fs.String("system-namespace", "rukpak-system", "rukpak's and rukpak-kapp's system namespace (rukpak's release Secrets are there)")
	classes := fs.String("classes", rukpakv1alpha2.ClassPlain+","+rukpakv1alpha2.ClassHelm+","+rukpakv1alpha2.ClassRegistry, "the classes rukpak-kapp will claim, as for run --classes; BundleDeployments of rukpak's built-in classes are planned too")
	output := fs.StringP("output", "o", "text", "output format: "+outputFormats)
	kube := kubeconfigFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*output); err != nil {
			return err
		}
		claimed, err := adapter.ParseClasses(client.SplitList(*classes))
		if err != nil {
			return usageError{fmt.Errorf("--classes: %w", err)}
		}
		cfg, err := kube.ToRESTConfig()
		if err != nil {
			return fmt.Errorf("load kubeconfig: %w", err)
		}
		return migratePlan(cmd.Context(), cfg, *systemNamespace, claimed, *output, cmd.OutOrStdout())
	}
	return cmd
}

// migratePlan prints the plan of every BundleDeployment of the cluster.
func migratePlan(ctx context.Context, cfg *rest.Config, systemNamespace string, claimed adapter.Classes, output string, out io.Writer) error {
	reports, err := client.PlanMigration(ctx, cfg, systemNamespace, claimed)
	if err != nil {
		return err
	}
	if done, err := writeStructured(out, reports, output); err != nil {
		return err
	} else if !done {
		for _, r := range reports {
			writeReport(out, r)
		}
	}
	for _, r := range reports {
		if r.Plan != nil && r.Plan.Blocked() {
			return errBlocked
		}
	}
	return nil
}

func writeReport(w io.Writer, r client.MigrationReport) {
	if r.Plan == nil {
		fmt.Fprintf(w, "BundleDeployment %s: skipped: %s\n\n", r.BundleDeployment, r.Skipped)
		return
	}
	p := r.Plan
	verdict := "can be taken over in place"
	if p.Blocked() {
		verdict = "BLOCKED"
	}
	fmt.Fprintf(w, "BundleDeployment %s (%s): %s\n", p.BundleDeployment, p.Class, verdict)
	if p.Release != "" {
		fmt.Fprintf(w, "  release: %s\n", p.Release)
	}
	for _, b := range p.Blockers {
		fmt.Fprintf(w, "  blocked (%s): %s\n", b.Reason, b.Message)
	}
	for _, o := range p.Objects {
		fmt.Fprintf(w, "  %s %s\n", o.Action, o.Ref)
		writeChange(w, "label", o.Labels)
		writeChange(w, "annotation", o.Annotations)
		writeChange(w, "owner reference", o.OwnerReferences)
	}
	for _, s := range p.Cleanup.ReleaseSecrets {
		fmt.Fprintf(w, "  delete release Secret %s\n", s)
	}
	for _, f := range p.Cleanup.Finalizers {
		fmt.Fprintf(w, "  remove finalizer %s\n", f)
	}
	for _, k := range p.Cleanup.Kept {
		fmt.Fprintf(w, "  keep: %s\n", k)
	}
	for _, l := range p.Later {
		fmt.Fprintf(w, "  at the next change: %s\n", l)
	}
	fmt.Fprintln(w)
}

func writeChange(w io.Writer, what string, c takeover.MapChange) {
	for _, k := range slices.Sorted(maps.Keys(c.Removed)) {
		fmt.Fprintf(w, "      - %s %s=%s\n", what, k, c.Removed[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Added)) {
		fmt.Fprintf(w, "      + %s %s=%s\n", what, k, clip(c.Added[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(c.Changed)) {
		fmt.Fprintf(w, "      ~ %s %s=%s\n", what, k, clip(c.Changed[k]))
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}
