package upgradeplan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	installplan "github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
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

// bundles is a fetcher of registry+v1 bundles by image reference.
type bundles map[string]fetch.Files

func (b bundles) Fetch(_ context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error) {
	files, ok := b[bd.Spec.Source.Image.Ref]
	if !ok {
		return nil, nil, fmt.Errorf("no image %s", bd.Spec.Source.Image.Ref)
	}
	return files, bd.Spec.Source.DeepCopy(), nil
}

func (bundles) RemoteHead(context.Context, *rukpakv1alpha2.GitSource) (string, error) {
	return "", errors.New("no git here")
}

// efsVersion is aws-efs-operator 0.0.8 from the registry+v1 corpus as
// version v, with its files' text replaced as edits say (old, new, ...).
func efsVersion(t *testing.T, v string, edits ...string) fetch.Files {
	t.Helper()
	files, err := convert.ReadDir(os.DirFS(filepath.Join("..", "..", "test", "testdata", "registry-v1-corpus", "aws-efs-operator", "0.0.8")))
	if err != nil {
		t.Fatal(err)
	}
	edits = append([]string{"name: aws-efs-operator.v0.0.8", "name: aws-efs-operator.v" + v, "\n  version: 0.0.8", "\n  version: " + v}, edits...)
	r := strings.NewReplacer(edits...)
	for name, data := range files {
		files[name] = []byte(r.Replace(string(data)))
	}
	return files
}

// TestCompute: each hop of a walk rendered as the adapter renders it
// and compared with the hop before: a cluster rule gained, a CRD field
// dropped (refused by the CRD upgrade safety check, word for word as the
// webhook refuses it), an image changed, and a bundle the conversion
// refuses for the watched namespaces, with the conversion's own words.
func TestCompute(t *testing.T) {
	t.Parallel()
	const (
		jobs        = "          rules:\n            - apiGroups:\n                - batch\n              resources:\n                - jobs\n              verbs:\n                - get\n"
		noMessage   = "              message:\n                description: Message is a human-readable string, usually describing\n                  what went wrong when `Phase` is `SharedVolumeFailed`.\n                type: string\n"
		onlySingle  = "    - type: SingleNamespace\n      supported: false"
		allNS       = "    - type: AllNamespaces\n      supported: true"
		image, imgB = "quay.io/app-sre/aws-efs-operator:9c87267", "quay.io/app-sre/aws-efs-operator:v2"
	)
	fetcher := bundles{
		"r/efs:1.0.0": efsVersion(t, "1.0.0"),
		"r/efs:1.1.0": efsVersion(t, "1.1.0", "          rules:\n", jobs),
		"r/efs:1.2.0": efsVersion(t, "1.2.0", "          rules:\n", jobs, noMessage, ""),
		"r/efs:2.0.0": efsVersion(t, "2.0.0", "          rules:\n", jobs, image, imgB),
		"r/efs:3.0.0": efsVersion(t, "3.0.0", "          rules:\n", jobs, image, imgB, onlySingle, "    - type: SingleNamespace\n      supported: true", allNS, "    - type: AllNamespaces\n      supported: false"),
	}
	var nodes []catalog.Node
	prev := ""
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0", "2.0.0", "3.0.0"} {
		e := catalog.Entry{Package: "aws-efs-operator", Channel: "stable", Bundle: "efs." + v, Version: v, Replaces: prev, RefName: "stable.aws-efs-operator.x"}
		nodes = append(nodes, catalog.Node{Entry: e, Image: "r/efs:" + v})
		prev = e.Bundle
	}
	oi := &catalogsv1alpha1.OperatorInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "efs"},
		Spec: catalogsv1alpha1.OperatorInstallSpec{PackageName: "aws-efs-operator", Channel: "stable", RefName: "stable.aws-efs-operator.x", Version: "1.0.0", Bundle: "efs.1.0.0",
			Image: "r/efs:1.0.0", InstallNamespace: "efs-op"}}
	bd := installplan.BundleDeployment(oi, installplan.Step{Entry: nodes[0].Entry, Image: "r/efs:1.0.0"})
	plan, err := Compute(context.Background(), Input{Install: oi, BD: bd, Published: nodes, Fetcher: fetcher})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Path, []string{"1.0.0", "1.1.0", "1.2.0", "2.0.0", "3.0.0"}) || len(plan.Hops) != 4 {
		t.Fatalf("path %v, %d hops", plan.Path, len(plan.Hops))
	}
	h := plan.Hops
	if !slices.Equal(h[0].ClusterRules.Gained, []string{"get batch/jobs"}) || len(h[0].CRDs) != 0 || h[0].Refused() {
		t.Errorf("1.1.0: rules %+v, CRDs %+v, refused %t", h[0].ClusterRules, h[0].CRDs, h[0].Refused())
	}
	if len(h[1].CRDs) != 1 || h[1].CRDs[0].Allowed || !strings.Contains(h[1].CRDs[0].Verdict, `failed to validate safety of UPDATE for CRD "sharedvolumes.aws-efs.managed.openshift.io"`) ||
		!strings.Contains(h[1].CRDs[0].Verdict, "message") || !h[1].Refused() {
		t.Errorf("1.2.0: CRDs %+v", h[1].CRDs)
	}
	if len(h[2].CRDs) != 1 || !h[2].CRDs[0].Allowed || !slices.Equal(h[2].Images.Added, []string{imgB}) || !slices.Equal(h[2].Images.Removed, []string{image}) {
		t.Errorf("2.0.0: CRDs %+v, images %+v", h[2].CRDs, h[2].Images)
	}
	if !slices.Equal(h[2].InstallModes, []string{"AllNamespaces"}) {
		t.Errorf("2.0.0: install modes %v", h[2].InstallModes)
	}
	if !strings.Contains(h[3].Failed, "need the namespaces to watch: set spec.config.watchNamespaces") || !h[3].Refused() {
		t.Errorf("3.0.0, which supports SingleNamespace only: failed %q", h[3].Failed)
	}
	if !plan.Refused() {
		t.Error("a plan with refused hops is not refused")
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
