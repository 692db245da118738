package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// storedKinds are the kinds an install adds to the cluster's store: the
// BundleDeployment, what the adapter writes (App, Secrets it stores
// content or mirrors in, Events), kapp-controller's and kapp's own records
// (ConfigMaps) and what the bundle's objects make (a Deployment's
// ReplicaSet and Pod).
var storedKinds = []schema.GroupVersionKind{
	{Group: "core.rukpak.io", Version: "v1alpha2", Kind: "BundleDeployment"},
	{Group: "kappctrl.k14s.io", Version: "v1alpha1", Kind: "App"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "Event"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Version: "v1", Kind: "Pod"},
}

// stored is the number of objects and their bytes by kind. Bytes are the
// objects' JSON as the API serves them: etcd keeps custom resources as JSON
// and built-in kinds as protobuf, which is smaller.
type stored map[string]storedCount

type storedCount struct{ Objects, Bytes int64 }

// storedNow lists every kind of storedKinds in every namespace. A kind the
// cluster does not serve (rukpak's run has no Apps) counts nothing.
func storedNow(ctx context.Context, c client.Client) (stored, error) {
	out := stored{}
	for _, gvk := range storedKinds {
		var sc storedCount
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		for {
			if err := c.List(ctx, list, client.Limit(500), client.Continue(list.GetContinue())); err != nil {
				if meta.IsNoMatchError(err) {
					break
				}
				return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
			}
			for i := range list.Items {
				data, err := json.Marshal(list.Items[i].Object)
				if err != nil {
					return nil, err
				}
				sc.Objects++
				sc.Bytes += int64(len(data))
			}
			if list.GetContinue() == "" {
				break
			}
		}
		out[gvk.Kind] = sc
	}
	return out, nil
}

// minus is what s holds beyond before.
func (s stored) minus(before stored) stored {
	out := stored{}
	for k, v := range s {
		out[k] = storedCount{Objects: v.Objects - before[k].Objects, Bytes: v.Bytes - before[k].Bytes}
	}
	return out
}

// perObject is each kind's objects and bytes per installed object, the
// largest kinds first, then the sum.
func (s stored) perObject(n int) string {
	var parts []string
	var objs, bytes int64
	for _, gvk := range storedKinds {
		v := s[gvk.Kind]
		if v.Objects == 0 && v.Bytes == 0 {
			continue
		}
		objs += v.Objects
		bytes += v.Bytes
		parts = append(parts, fmt.Sprintf("%s %.2f × %.1f KB", gvk.Kind, float64(v.Objects)/float64(n), float64(v.Bytes)/float64(max(v.Objects, 1))/1000))
	}
	return fmt.Sprintf("%.2f objects, %.1f KB: %s", float64(objs)/float64(n), float64(bytes)/float64(n)/1000, strings.Join(parts, ", "))
}
