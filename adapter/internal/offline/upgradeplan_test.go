package offline

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

func TestUpgradePath(t *testing.T) {
	t.Parallel()
	node := func(bundle, version, replaces string) catalog.Node {
		return catalog.Node{Entry: catalog.Entry{Package: "efs", Channel: "stable", Bundle: bundle, Version: version, Replaces: replaces}, Image: "r/" + bundle}
	}
	v1, v11, v12, v2 := node("e.1", "1.0.0", ""), node("e.1.1", "1.1.0", "e.1"), node("e.1.2", "1.2.0+b", "e.1.1"), node("e.2", "2.0.0", "e.1.2")
	orphan := node("e.3", "3.0.0", "")
	published := []catalog.Node{v1, v11, v12, v2, orphan}
	for _, tc := range []struct {
		name, policy, to string
		path             []string
		err              string
	}{
		{name: "the highest version reachable", path: []string{"1.0.0", "1.1.0", "1.2.0+b", "2.0.0"}},
		{name: "a version asked for", to: "1.1.0", path: []string{"1.0.0", "1.1.0"}},
		{name: "a Package version, build metadata dropped", to: "1.2.0", path: []string{"1.0.0", "1.1.0", "1.2.0+b"}},
		{name: "SelfCertified: straight to the head", policy: catalog.PolicySelfCertified, path: []string{"1.0.0", "3.0.0"}},
		{name: "no path", to: "3.0.0", err: "does not reach 3.0.0 from 1.0.0, the version installed, along its edges (it reaches 1.1.0 in one edge)"},
		{name: "no such version", to: "9.9.9", err: "publishes no version 9.9.9"},
		{name: "the version installed", to: "1.0.0", path: []string{"1.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, err := upgradePath(v1.Entry, tc.policy, published, tc.to)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range path {
				got = append(got, n.Entry.Version)
			}
			if !slices.Equal(got, tc.path) {
				t.Errorf("path %v, want %v", got, tc.path)
			}
		})
	}
}

func TestWatchMode(t *testing.T) {
	t.Parallel()
	all := []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"}
	for _, tc := range []struct {
		name    string
		watched []string
		modes   []string
		mode    string
		refused string
	}{
		{name: "default, all supported", modes: all, mode: "AllNamespaces"},
		{name: "default without AllNamespaces: its own", modes: []string{"OwnNamespace"}, mode: "OwnNamespace"},
		{name: "its own namespace", watched: []string{"op"}, modes: all, mode: "OwnNamespace"},
		{name: "another namespace", watched: []string{"apps"}, modes: all, mode: "SingleNamespace"},
		{name: "two namespaces, unsupported", watched: []string{"a", "b"}, modes: []string{"AllNamespaces", "SingleNamespace"}, mode: "MultiNamespace",
			refused: "does not support MultiNamespace (it supports AllNamespaces, SingleNamespace)"},
		{name: "all namespaces asked, unsupported", watched: []string{""}, modes: []string{"OwnNamespace"}, mode: "AllNamespaces", refused: "does not support AllNamespaces"},
		{name: "no CSV: nothing to say", watched: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mode, refused := watchMode(tc.watched, "op", tc.modes)
			if mode != tc.mode || (tc.refused == "") != (refused == "") || !strings.Contains(refused, tc.refused) {
				t.Errorf("watchMode = %q, %q; want %q, %q", mode, refused, tc.mode, tc.refused)
			}
		})
	}
}

func TestRulesImagesChange(t *testing.T) {
	t.Parallel()
	role := func(kind, ns string, rules ...any) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"kind": kind, "rules": rules}}
		o.SetNamespace(ns)
		return o
	}
	rule := func(groups, resources, verbs, names []any) map[string]any {
		r := map[string]any{"apiGroups": groups, "resources": resources, "verbs": verbs}
		if names != nil {
			r["resourceNames"] = names
		}
		return r
	}
	before := []*unstructured.Unstructured{
		role("ClusterRole", "", rule([]any{""}, []any{"configmaps", "secrets"}, []any{"get"}, nil)),
		role("Role", "op", rule([]any{"apps"}, []any{"deployments"}, []any{"get", "update"}, []any{"op"})),
		{Object: map[string]any{"kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"image": "op:1"}}, "initContainers": []any{map[string]any{"image": "init:1"}}}}}}},
	}
	after := []*unstructured.Unstructured{
		role("ClusterRole", "", rule([]any{""}, []any{"configmaps"}, []any{"get"}, nil), map[string]any{"nonResourceURLs": []any{"/metrics"}, "verbs": []any{"get"}}),
		role("Role", "op", rule([]any{"apps"}, []any{"deployments"}, []any{"get", "update"}, []any{"op"})),
		{Object: map[string]any{"kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"image": "op:2"}}, "initContainers": []any{map[string]any{"image": "init:1"}}}}}}},
	}
	cluster := ruleChange(rules(before, "ClusterRole"), rules(after, "ClusterRole"))
	if !slices.Equal(cluster.Gained, []string{"get /metrics"}) || !slices.Equal(cluster.Lost, []string{"get secrets"}) {
		t.Errorf("cluster rules %+v", cluster)
	}
	if got := rules(before, "Role"); !slices.Equal(got, []string{"get,update apps/deployments named op in op"}) {
		t.Errorf("namespace rules %v", got)
	}
	if ns := ruleChange(rules(before, "Role"), rules(after, "Role")); len(ns.Gained)+len(ns.Lost) != 0 {
		t.Errorf("an unchanged Role changed: %+v", ns)
	}
	if c := change(images(before), images(after)); !slices.Equal(c.Added, []string{"op:2"}) || !slices.Equal(c.Removed, []string{"op:1"}) {
		t.Errorf("images %+v", c)
	}
}
