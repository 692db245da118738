package kube

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// InstalledSelector selects what kapp installed for any BundleDeployment (the
// owner labels every installed object carries). The adapter's workload
// informers are restricted to it, so it never caches the rest of the cluster.
var InstalledSelector = labels.SelectorFromSet(labels.Set{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind})

// ObserveWorkloads lists the installed workloads into facts. Only an
// install can be made unhealthy by its workloads; other states skip the
// three cache lists. Its error is reported and retried beside the install.
func ObserveWorkloads(ctx context.Context, c client.Reader, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts, deployed bool) error {
	if !deployed && !apimeta.IsStatusConditionTrue(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled) {
		return nil
	}
	w, err := workloadsOf(ctx, c, bd.Name)
	if err != nil {
		facts.WorkloadsFailure = err.Error()
	}
	facts.Workloads = &w
	return err
}

// workloadsOf lists, from the informer cache, the workloads bdName installed.
func workloadsOf(ctx context.Context, c client.Reader, bdName string) (status.Workloads, error) {
	owned := client.MatchingLabels{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName: bdName}
	var w status.Workloads
	deps, sets, daemons := &appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.DaemonSetList{}
	for _, l := range []client.ObjectList{deps, sets, daemons} {
		if err := c.List(ctx, l, owned); err != nil {
			return w, fmt.Errorf("list installed workloads: %w", err)
		}
	}
	w.Deployments, w.StatefulSets, w.DaemonSets = deps.Items, sets.Items, daemons.Items
	return w, nil
}
