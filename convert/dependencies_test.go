package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdYAML is a minimal apiextensions.k8s.io/v1 CRD serving the given
// versions, the first one stored.
func crdYAML(plural, group, kind string, versions ...string) []byte {
	var vs strings.Builder
	for i, v := range versions {
		fmt.Fprintf(&vs, "  - name: %s\n    served: true\n    storage: %v\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n", v, i == 0)
	}
	return []byte(fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
spec:
  group: %[2]s
  scope: Namespaced
  names: {plural: %[1]s, singular: %[1]s, kind: %[3]s, listKind: %[3]sList}
  versions:
%[4]s`, plural, group, kind, vs.String()))
}

// A CSV that lists one of its own CRDs under required too (published
// bundles do) needs nothing from the cluster for it; a version the bundle
// does not serve is still needed.
func TestRequiredAPIsTheBundleServesAreNoDependency(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, `  customresourcedefinitions:
    owned:
    - {name: widgets.example.com, version: v1, kind: Widget}
    required:
    - {name: widgets.example.com, version: v1, kind: Widget}
    - {name: widgets.example.com, version: v2, kind: Widget}
  apiservicedefinitions:
    required:
    - {group: example.com, version: v1alpha1, kind: Widget}
    - {group: metrics.example.org, version: v1, kind: Usage}
`)
	b["manifests/widgets.yaml"] = crdYAML("widgets", "example.com", "Widget", "v1", "v1alpha1")
	b["metadata/dependencies.yaml"] = []byte("dependencies:\n- type: olm.gvk\n  value: {group: example.com, version: v1, kind: Widget}\n")
	r, err := Convert(b, Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	want := []string{
		"olm.gvk Widget (example.com/v2) from ClusterServiceVersion spec.customresourcedefinitions.required",
		"olm.gvk Usage (metrics.example.org/v1) from ClusterServiceVersion spec.apiservicedefinitions.required",
	}
	if diff := cmp.Diff(want, describe(r.Metadata.Dependencies)); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
}

// Declared dependencies no longer refuse a bundle (rukpak v0.24.0
// installed such bundles); they are data for the caller to check. Real
// bundles declare them in every place OLM reads.
func TestDependenciesOfRealBundles(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"rabbitmq-messaging-topology-operator/1.19.3": {
			// Declared twice, listed once.
			"olm.gvk RabbitmqCluster (rabbitmq.com/v1beta1) from metadata/dependencies.yaml, ClusterServiceVersion spec.customresourcedefinitions.required",
			"olm.package rabbitmq-cluster-operator >2.0.0 from metadata/dependencies.yaml",
		},
		"dbaas-operator/0.5.0": {
			`olm.constraint {"any":{"constraints":[{"failureMessage":"Package rh-service-binding-operator is needed","package":{"packageName":"rh-service-binding-operator","versionRange":"\u003e=1.0.0"}},{"failureMessage":"Package service-binding-operator is needed","package":{"packageName":"service-binding-operator","versionRange":"\u003e=1.0.0"}}]},"failureMessage":"Service Binding Operator is required"} from metadata/properties.yaml (olm.constraint)`,
			"olm.package ack-rds-controller >=0.0.27 <=0.1.3 from metadata/dependencies.yaml",
		},
		"shipwright-operator/0.15.2": {
			"olm.gvk Certificate (cert-manager.io/v1) from ClusterServiceVersion spec.customresourcedefinitions.required",
			"olm.gvk TektonConfig (operator.tekton.dev/v1alpha1) from ClusterServiceVersion spec.customresourcedefinitions.required",
		},
		"cluster-aas-operator/0.1.5": {
			"olm.gvk Application (argoproj.io/v1alpha1) from metadata/dependencies.yaml",
		},
	}
	for dir, want := range tests {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			files, err := ReadDir(os.DirFS(filepath.Join("..", "test", "testdata", "registry-v1-corpus", dir)))
			if err != nil {
				t.Fatal(err)
			}
			m, err := ReadMetadata(files)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, describe(m.Dependencies)); diff != "" {
				t.Errorf("dependencies (-want +got):\n%s", diff)
			}
			if _, err := Convert(files, Options{InstallNamespace: "op-ns"}); err != nil && strings.Contains(err.Error(), "dependenc") {
				t.Errorf("dependencies must not refuse the bundle: %v", err)
			}
		})
	}
}

// Every form a dependency is declared in, and what is made of values OLM
// could not read either.
func TestDependencyForms(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	b["metadata/dependencies.yaml"] = []byte(`dependencies:
- {type: olm.gvk, value: {group: a.example.com, version: v1, kind: A}}
- {type: olm.gvk, value: {group: a.example.com}}
- {type: olm.gvk, value: [not, a, map]}
- {type: olm.package, value: {packageName: etcd, version: ">=0.9.0 <1.0.0 || 2.x"}}
- {type: olm.package, value: {packageName: etcd, version: "not a range"}}
- {type: olm.package, value: {version: 1.0.0}}
- {type: olm.label, value: {label: fips}}
- {type: olm.label, value: {}}
- {type: olm.constraint, value: {failureMessage: needs etcd, package: {packageName: etcd, versionRange: ">=1.0.0"}}}
- {type: com.example.custom, value: {anything: [1, 2]}}
`)
	b["metadata/properties.yaml"] = []byte(`properties:
- {type: olm.package.required, value: {packageName: prometheus, versionRange: ">=0.47.0"}}
- {type: olm.label.required, value: {label: fips}}
- {type: olm.maxOpenShiftVersion, value: "4.8"}
`)
	b["manifests/demo.csv.yaml"] = []byte(strings.Replace(string(b["manifests/demo.csv.yaml"]), "    alm-examples: \"[]\"\n",
		"    alm-examples: \"[]\"\n    olm.properties: '[{\"type\": \"olm.gvk.required\", \"value\": {\"group\": \"b.example.com\", \"version\": \"v1\", \"kind\": \"B\"}}]'\n", 1))
	r, err := Convert(b, Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`com.example.custom {"anything":[1,2]} from metadata/dependencies.yaml`,
		`olm.constraint {"failureMessage":"needs etcd","package":{"packageName":"etcd","versionRange":"\u003e=1.0.0"}} from metadata/dependencies.yaml`,
		`olm.gvk ["not","a","map"] from metadata/dependencies.yaml invalid: the value is not an object with a group, version and kind`,
		`olm.gvk A (a.example.com/v1) from metadata/dependencies.yaml`,
		`olm.gvk B (b.example.com/v1) from the ClusterServiceVersion's olm.properties annotation (olm.gvk.required)`,
		`olm.gvk {"group":"a.example.com"} from metadata/dependencies.yaml invalid: the value names no version or no kind`,
		`olm.label fips from metadata/dependencies.yaml, metadata/properties.yaml (olm.label.required)`,
		`olm.label {} from metadata/dependencies.yaml invalid: the value names no label`,
		`olm.package etcd >=0.9.0 <1.0.0 || 2.x from metadata/dependencies.yaml`,
		`olm.package prometheus >=0.47.0 from metadata/properties.yaml (olm.package.required)`,
		`olm.package {"packageName":"etcd","version":"not a range"} from metadata/dependencies.yaml invalid: "not a range" is not a semver version range: Could not get version from string: "not"`,
		`olm.package {"version":"1.0.0"} from metadata/dependencies.yaml invalid: the value names no packageName`,
	}
	if diff := cmp.Diff(want, describe(r.Metadata.Dependencies)); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if r.Metadata.Package != (Package{Name: "demo"}) {
		t.Errorf("package = %+v (the test CSV has no version)", r.Metadata.Package)
	}
}

func TestCheckDependencies(t *testing.T) {
	t.Parallel()
	gvk := func(g, v, k string) Dependency {
		return Dependency{Type: DependencyGVK, Source: "metadata/dependencies.yaml", GVK: schema.GroupVersionKind{Group: g, Version: v, Kind: k}}
	}
	pkg := func(name, rng string) Dependency {
		return Dependency{Type: DependencyPackage, Source: "metadata/dependencies.yaml", Package: name, VersionRange: rng}
	}
	facts := Facts{
		Served: map[schema.GroupVersionKind]bool{{Group: "kafka.strimzi.io", Version: "v1beta2", Kind: "Kafka"}: true},
		Installed: []InstalledPackage{
			{Package: Package{Name: "strimzi-kafka-operator", Version: "0.28.0"}, By: "strimzi"},
			{Package: Package{Name: "camel-k", Version: "1.8.2"}, By: "camel"},
			{Package: Package{Name: "camel-k", Version: "2.0.0"}},
			{Package: Package{Name: "labelled", Version: "1.0.0"}, Labels: []string{"fips"}},
			{Package: Package{Name: "service-binding-operator", Version: "1.3.0"}},
		},
	}
	tests := []struct {
		name string
		dep  Dependency
		want string // "" when met
	}{
		{name: "served API", dep: gvk("kafka.strimzi.io", "v1beta2", "Kafka")},
		{name: "API served at another version only", dep: gvk("kafka.strimzi.io", "v1beta1", "Kafka"),
			want: "the cluster does not serve Kafka (kafka.strimzi.io/v1beta1): install the operator that provides it (declared in metadata/dependencies.yaml)"},
		{name: "core API", dep: gvk("", "v1", "Pod"), want: "the cluster does not serve Pod (v1): install the operator that provides it (declared in metadata/dependencies.yaml)"},
		{name: "package at an exact version", dep: pkg("strimzi-kafka-operator", "0.28.0")},
		{name: "package in a range", dep: pkg("strimzi-kafka-operator", ">=0.27.0 <0.29.0")},
		{name: "one of two installs in range", dep: pkg("camel-k", ">=2.0.0")},
		{name: "package outside the range", dep: pkg("camel-k", "1.9.0"),
			want: `package camel-k is installed at version 1.8.2 (BundleDeployment camel) and 2.0.0, outside the required range "1.9.0": install a version in that range with a BundleDeployment (declared in metadata/dependencies.yaml)`},
		{name: "package missing", dep: pkg("etcd", ">=0.9.0"),
			want: `package etcd at a version in the range ">=0.9.0" is not installed: install a version in that range with a BundleDeployment (declared in metadata/dependencies.yaml)`},
		{name: "bad range from a caller", dep: pkg("etcd", "newest"),
			want: `dependency olm.package etcd newest cannot be checked: "newest" is not a semver version range (declared in metadata/dependencies.yaml)`},
		{name: "label present", dep: Dependency{Type: DependencyLabel, Source: "x", Label: "fips"}},
		{name: "label missing", dep: Dependency{Type: DependencyLabel, Source: "x", Label: "arm64"},
			want: `no installed bundle has the label "arm64": install a bundle that declares the olm.label property "arm64" (declared in x)`},
		{name: "CEL constraint", dep: constraintDep(`{"cel": {"rule": "true"}}`),
			want: `the olm.constraint CEL rule "true" cannot be checked: CEL rule "true" tests catalog bundles, which a cluster does not list; make sure the cluster meets it (declared in x)`},
		{name: "any with one alternative installed (dbaas-operator's)", dep: constraintDep(serviceBinding("service-binding-operator"))},
		{name: "any with none installed", dep: constraintDep(serviceBinding("sbo")),
			want: `the olm.constraint "Service Binding Operator is required" is not met: none of its alternatives holds: package rh-service-binding-operator at a version in the range ">=1.0.0" is not installed; package sbo at a version in the range ">=1.0.0" is not installed (declared in x)`},
		{name: "any met alongside a CEL rule", dep: constraintDep(`{"any": {"constraints": [{"cel": {"rule": "x"}}, {"gvk": {"group": "kafka.strimzi.io", "version": "v1beta2", "kind": "Kafka"}}]}}`)},
		{name: "any unknown with a CEL rule", dep: constraintDep(`{"any": {"constraints": [{"cel": {"rule": "x"}}, {"gvk": {"group": "a", "version": "v1", "kind": "A"}}]}}`),
			want: `the olm.constraint one of (CEL rule "x"; A (a/v1) served) cannot be checked: none of its alternatives is known to hold: CEL rule "x" tests catalog bundles, which a cluster does not list; the cluster does not serve A (a/v1); make sure the cluster meets it (declared in x)`},
		{name: "all with one missing", dep: constraintDep(`{"all": {"constraints": [{"package": {"packageName": "camel-k", "versionRange": ">=2.0.0"}}, {"gvk": {"group": "a", "version": "v1", "kind": "A"}}]}}`),
			want: `the olm.constraint all of (package camel-k in range ">=2.0.0" installed; A (a/v1) served) is not met: the cluster does not serve A (a/v1) (declared in x)`},
		{name: "not, excluded version absent", dep: constraintDep(`{"not": {"constraints": [{"package": {"packageName": "camel-k", "versionRange": "<1.0.0"}}]}}`)},
		{name: "not, excluded version installed", dep: constraintDep(`{"not": {"constraints": [{"package": {"packageName": "camel-k", "versionRange": "<2.0.0"}}]}}`),
			want: `the olm.constraint none of (package camel-k in range "<2.0.0" installed) is not met: it excludes what the cluster has: package camel-k in range "<2.0.0" installed (declared in x)`},
		{name: "constraint from a caller that does not parse", dep: constraintDep(`{"gvk": {}, "package": {}}`),
			want: `dependency olm.constraint {"gvk":{},"package":{}} cannot be checked: each constraint needs exactly one of gvk, package, all, any, not or cel (declared in x)`},
		{name: "unknown type, dropped by OLM", dep: Dependency{Type: "com.example.custom", Source: "x", Value: []byte(`{}`)}},
		{name: "invalid", dep: Dependency{Type: DependencyGVK, Source: "x", Value: []byte(`{"group":"a"}`), Invalid: "the value names no version or no kind"},
			want: `dependency olm.gvk {"group":"a"} cannot be checked: the value names no version or no kind; ask the bundle's authors to fix it (declared in x)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := CheckDependencies([]Dependency{tt.dep}, facts)
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("want met, got %q", got[0].Message)
			case tt.want != "" && len(got) != 1:
				t.Errorf("want unmet %q, got %v", tt.want, got)
			case tt.want != "" && got[0].Message != tt.want:
				t.Errorf("message:\n got %s\nwant %s", got[0].Message, tt.want)
			}
		})
	}
	// All at once: every unmet one, sorted by message.
	var all []Dependency
	for _, tt := range tests {
		all = append(all, tt.dep)
	}
	got := CheckDependencies(all, facts)
	if len(got) != 13 {
		t.Fatalf("%d unmet, want 13", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].Message > got[i].Message {
			t.Errorf("not sorted: %q before %q", got[i-1].Message, got[i].Message)
		}
	}
}

func constraintDep(value string) Dependency {
	return Dependency{Type: DependencyConstraint, Source: "x", Value: []byte(value)}
}

func serviceBinding(second string) string {
	return `{"failureMessage": "Service Binding Operator is required", "any": {"constraints": [
		{"failureMessage": "Package rh-service-binding-operator is needed", "package": {"packageName": "rh-service-binding-operator", "versionRange": ">=1.0.0"}},
		{"package": {"packageName": "` + second + `", "versionRange": ">=1.0.0"}}]}}`
}
