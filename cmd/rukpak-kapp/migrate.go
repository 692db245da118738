package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
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
		claimed, err := adapter.ParseClasses(splitList(*classes))
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
	scheme, err := adapter.Scheme()
	if err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("build an HTTP client from the kubeconfig: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return fmt.Errorf("discover the cluster's kinds: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	// Only a reader goes further: the plan writes nothing.
	reports, err := planAll(ctx, client.Reader(c), mapper, systemNamespace, claimed)
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

// report is one BundleDeployment's line in the plan.
type report struct {
	BundleDeployment string `json:"bundleDeployment"`
	// Skipped says why there is no plan.
	Skipped string         `json:"skipped,omitempty"`
	Plan    *takeover.Plan `json:"plan,omitempty"`
}

func planAll(ctx context.Context, c client.Reader, mapper meta.RESTMapper, systemNamespace string, claimed adapter.Classes) ([]report, error) {
	bds, err := listBundleDeployments(ctx, c)
	if err != nil {
		return nil, err
	}
	sort.Slice(bds.Items, func(i, j int) bool { return bds.Items[i].Name < bds.Items[j].Name })
	var out []report
	for i := range bds.Items {
		bd := &bds.Items[i]
		r := report{BundleDeployment: bd.Name}
		builtin, ok := claimed[bd.Spec.ProvisionerClassName]
		if !ok && isBuiltin(bd.Spec.ProvisionerClassName) {
			builtin, ok = bd.Spec.ProvisionerClassName, true
		}
		app := &kappctrlv1alpha1.App{}
		err := c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: bd.Name}, app)
		switch {
		case !ok:
			r.Skipped = fmt.Sprintf("class %s is neither rukpak's nor claimed by rukpak-kapp", bd.Spec.ProvisionerClassName)
		case err == nil:
			r.Skipped = "already installed by rukpak-kapp (App " + systemNamespace + "/" + bd.Name + ")"
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("get app %s/%s: %w", systemNamespace, bd.Name, err)
		default:
			view := bd.DeepCopy()
			view.Spec.ProvisionerClassName = builtin
			// rukpak's first API: installed where rukpak v0.16 installed it.
			view = templates.View(view, systemNamespace)
			in, err := adapter.TakeOverInput(ctx, c, mapper, systemNamespace, view, true)
			if err != nil {
				return nil, fmt.Errorf("plan %s: %w", bd.Name, err)
			}
			p := takeover.Take(in)
			p.Class = bd.Spec.ProvisionerClassName
			r.Plan = &p
		}
		out = append(out, r)
	}
	return out, nil
}

// listBundleDeployments lists every BundleDeployment in its v1alpha2 form.
// A cluster still on rukpak v0.16 (its CRD, before rukpak-kapp's is
// applied) serves only v1alpha1: its objects are converted here, as the
// conversion webhook converts them once rukpak-kapp's CRD is applied.
func listBundleDeployments(ctx context.Context, c client.Reader) (*rukpakv1alpha2.BundleDeploymentList, error) {
	bds := &rukpakv1alpha2.BundleDeploymentList{}
	err := c.List(ctx, bds)
	if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		if err != nil {
			return nil, fmt.Errorf("list bundle deployments: %w", err)
		}
		return bds, nil
	}
	first := &rukpakv1alpha1.BundleDeploymentList{}
	if err := c.List(ctx, first); err != nil {
		return nil, fmt.Errorf("list bundle deployments at %s: %w", rukpakv1alpha1.GroupVersion, err)
	}
	for i := range first.Items {
		bds.Items = append(bds.Items, *rukpakv1alpha1.ToV1alpha2(&first.Items[i]))
	}
	return bds, nil
}

func isBuiltin(class string) bool {
	switch class {
	case rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry:
		return true
	}
	return false
}

func writeReport(w io.Writer, r report) {
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
