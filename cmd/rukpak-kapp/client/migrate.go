package client

import (
	"context"
	"fmt"
	"sort"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
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

// PlanMigration plans, against the cluster of cfg and writing nothing,
// taking over every BundleDeployment rukpak installed (of its built-in
// classes, or of those claimed): the same decisions the controller makes.
func PlanMigration(ctx context.Context, cfg *rest.Config, systemNamespace string, claimed adapter.Classes) ([]MigrationReport, error) {
	scheme, err := adapter.Scheme()
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("build an HTTP client from the kubeconfig: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("discover the cluster's kinds: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	// Only a reader goes further: the plan writes nothing.
	return planAll(ctx, client.Reader(c), mapper, systemNamespace, claimed)
}

// MigrationReport is one BundleDeployment's line in the plan.
type MigrationReport struct {
	BundleDeployment string `json:"bundleDeployment"`
	// Skipped says why there is no plan.
	Skipped string         `json:"skipped,omitempty"`
	Plan    *takeover.Plan `json:"plan,omitempty"`
}

// planAll plans the take-over of every BundleDeployment c lists, by name.
func planAll(ctx context.Context, c client.Reader, mapper meta.RESTMapper, systemNamespace string, claimed adapter.Classes) ([]MigrationReport, error) {
	bds, err := listBundleDeployments(ctx, c)
	if err != nil {
		return nil, err
	}
	sort.Slice(bds.Items, func(i, j int) bool { return bds.Items[i].Name < bds.Items[j].Name })
	var out []MigrationReport
	for i := range bds.Items {
		bd := &bds.Items[i]
		r := MigrationReport{BundleDeployment: bd.Name}
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

// isBuiltin says whether class is one of rukpak's built-in provisioner
// classes.
func isBuiltin(class string) bool {
	switch class {
	case rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry:
		return true
	}
	return false
}
