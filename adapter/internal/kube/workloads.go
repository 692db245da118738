package kube

import (
	"context"
	"fmt"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// InstalledSelector selects what kapp installed for any BundleDeployment (the
// owner labels every installed object carries). The adapter's workload
// informers are restricted to it, so it never caches the rest of the cluster.
var InstalledSelector = labels.SelectorFromSet(labels.Set{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind})

// ObserveWorkloads lists the installed workloads into facts, as the
// objects Healthy is judged by. Only an install can be made unhealthy by
// its objects; other states skip the three cache lists. Its error is
// reported and retried alongside the install.
func ObserveWorkloads(ctx context.Context, c client.Reader, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts, deployed bool) error {
	if !deployed && !apimeta.IsStatusConditionTrue(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled) {
		return nil
	}
	objs, listErr := workloadsOf(ctx, c, bd.Name)
	if listErr != nil {
		facts.InstalledFailure = listErr.Error()
	}
	facts.Installed = &status.Installed{Objects: objs}
	var err error
	if facts.Installed.Rules, err = status.HealthRulesOf(bd.Annotations); err != nil {
		facts.Installed.RulesInvalid = err.Error()
	}
	return listErr
}

// FirstJudgment says the installed objects of bd are judged for the first
// time since app deployed bd's generation: no Healthy of that generation
// is stored yet. That judgment reads the API server, not the caches,
// which may not have seen what the deploy just wrote.
func FirstJudgment(bd *rukpakv1alpha2.BundleDeployment, app *kappctrlv1alpha1.App) bool {
	if app == nil || !DeployedCurrent(app) {
		return false
	}
	h := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeHealthy)
	return h == nil || h.ObservedGeneration != bd.Generation
}

// ownedBy selects what kapp installed for the BundleDeployment bdName.
func ownedBy(bdName string) client.MatchingLabels {
	return client.MatchingLabels{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName: bdName}
}

// workloadsOf lists, from the informer cache, the workloads bdName
// installed, as kstatus reads them.
func workloadsOf(ctx context.Context, c client.Reader, bdName string) ([]unstructured.Unstructured, error) {
	owned := ownedBy(bdName)
	var out []unstructured.Unstructured
	lists := []struct {
		list client.ObjectList
		gvk  schema.GroupVersionKind
	}{
		{&appsv1.DeploymentList{}, appsv1.SchemeGroupVersion.WithKind("Deployment")},
		{&appsv1.StatefulSetList{}, appsv1.SchemeGroupVersion.WithKind("StatefulSet")},
		{&appsv1.DaemonSetList{}, appsv1.SchemeGroupVersion.WithKind("DaemonSet")},
	}
	for _, l := range lists {
		if err := c.List(ctx, l.list, owned); err != nil {
			return nil, fmt.Errorf("list installed workloads: %w", err)
		}
		items, err := apimeta.ExtractList(l.list)
		if err != nil {
			return nil, fmt.Errorf("list installed workloads: %w", err)
		}
		for _, item := range items {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(item)
			if err != nil {
				return nil, fmt.Errorf("read installed workload: %w", err)
			}
			u := unstructured.Unstructured{Object: m}
			u.SetGroupVersionKind(l.gvk)
			out = append(out, u)
		}
	}
	return out, nil
}
