package adapter

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// InstalledSelector selects what kapp installed for any BundleDeployment (the
// owner labels every installed object carries). The adapter's workload
// informers are restricted to it, so it never caches the rest of the cluster.
var InstalledSelector = labels.SelectorFromSet(labels.Set{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind})

// workloadsOf lists, from the informer cache, the workloads bd installed.
func (r *Reconciler) workloadsOf(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (status.Workloads, error) {
	owned := client.MatchingLabels{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName: bd.Name}
	var w status.Workloads
	deps, sets, daemons := &appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.DaemonSetList{}
	for _, l := range []client.ObjectList{deps, sets, daemons} {
		if err := r.client.List(ctx, l, owned); err != nil {
			return w, fmt.Errorf("list installed workloads: %w", err)
		}
	}
	w.Deployments, w.StatefulSets, w.DaemonSets = deps.Items, sets.Items, daemons.Items
	return w, nil
}

// ownerOf maps an installed object to the BundleDeployment that installed it.
func ownerOf(_ context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[rukpakv1alpha2.LabelOwnerKind] != rukpakv1alpha2.OwnerKind || l[rukpakv1alpha2.LabelOwnerName] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: l[rukpakv1alpha2.LabelOwnerName]}}}
}
