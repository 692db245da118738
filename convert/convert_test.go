package convert

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

const annotations = "annotations:\n  operators.operatorframework.io.bundle.package.v1: demo\n"

// csvBundle is a bundle with one CSV supporting modes, one deployment run
// by the "op" account, one namespaced and one cluster permission.
func csvBundle(modes map[string]bool, extra string) map[string][]byte {
	var im strings.Builder
	for _, m := range []string{"AllNamespaces", "OwnNamespace", "SingleNamespace", "MultiNamespace"} {
		fmt.Fprintf(&im, "    - type: %s\n      supported: %v\n", m, modes[m])
	}
	csv := `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: demo.v1.0.0
  annotations:
    alm-examples: "[]"
spec:
  installModes:
` + im.String() + `  install:
    strategy: deployment
    spec:
      permissions:
      - serviceAccountName: op
        rules:
        - apiGroups: [""]
          resources: [configmaps]
          verbs: [get, list, watch, create]
      clusterPermissions:
      - serviceAccountName: op
        rules:
        - apiGroups: [""]
          resources: [nodes]
          verbs: [get]
      deployments:
      - name: demo-operator
        label: {app: demo}
        spec:
          selector: {matchLabels: {app: demo}}
          template:
            metadata:
              labels: {app: demo}
              annotations: {kept: "yes"}
            spec:
              serviceAccountName: op
              containers:
              - name: manager
                image: example.invalid/demo:v1
` + extra
	return map[string][]byte{
		"metadata/annotations.yaml":     []byte(annotations),
		"manifests/":                    nil,
		"manifests/demo.csv.yaml":       []byte(csv),
		"manifests/crd.yaml":            []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: demos.example.com\nspec:\n  group: example.com\n"),
		"manifests/svc.json":            []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"metrics","namespace":"elsewhere"}}`),
		"manifests/clusterrole.yaml":    []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: demo-view\n  namespace: wrong\n"),
		"manifests/serviceaccount.yaml": []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: shipped\n"),
	}
}

func keys(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func find(objs []*unstructured.Unstructured, kind, ns string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == ns {
			out = append(out, o)
		}
	}
	return out
}

func TestInstallModes(t *testing.T) {
	t.Parallel()
	all := map[string]bool{"AllNamespaces": true, "OwnNamespace": true, "SingleNamespace": true, "MultiNamespace": true}
	tests := []struct {
		name        string
		modes       map[string]bool
		watch       []string
		wantTargets string
		wantRoleNS  []string
		wantErr     string
	}{
		{name: "default is all namespaces when supported", modes: all, wantTargets: ""},
		{name: "explicit all namespaces", modes: all, watch: []string{""}, wantTargets: ""},
		{name: "default falls back to own namespace", modes: map[string]bool{"OwnNamespace": true}, wantTargets: "op-ns", wantRoleNS: []string{"op-ns"}},
		{name: "own namespace", modes: all, watch: []string{"op-ns"}, wantTargets: "op-ns", wantRoleNS: []string{"op-ns"}},
		{name: "single namespace keeps roles at home too", modes: all, watch: []string{"team-a"}, wantTargets: "team-a", wantRoleNS: []string{"op-ns", "team-a"}},
		{name: "multi namespace", modes: all, watch: []string{"team-b", "team-a", "team-a"}, wantTargets: "team-a,team-b", wantRoleNS: []string{"op-ns", "team-a", "team-b"}},
		{name: "all namespaces unsupported", modes: map[string]bool{"OwnNamespace": true, "SingleNamespace": true}, watch: []string{""}, wantErr: "supported install modes [OwnNamespace SingleNamespace] do not support targeting all namespaces (AllNamespaces install mode)"},
		{name: "multi only needs watchNamespaces", modes: map[string]bool{"MultiNamespace": true}, wantErr: "supported install modes [MultiNamespace] need the namespaces to watch: set spec.config.watchNamespaces"},
		{name: "single unsupported", modes: map[string]bool{"AllNamespaces": true}, watch: []string{"team-a"}, wantErr: `do not support watching the single namespace "team-a" (SingleNamespace install mode)`},
		{name: "own unsupported", modes: map[string]bool{"SingleNamespace": true}, watch: []string{"op-ns"}, wantErr: `(OwnNamespace install mode)`},
		{name: "multi including own needs own", modes: map[string]bool{"MultiNamespace": true}, watch: []string{"op-ns", "team-a"}, wantErr: `watching the install namespace "op-ns" (OwnNamespace install mode)`},
		{name: "all mixed with namespaces", modes: all, watch: []string{"", "team-a"}, wantErr: `"" (all namespaces) cannot be combined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs, err := Objects(csvBundle(tt.modes, ""), Options{InstallNamespace: "op-ns", WatchNamespaces: tt.watch})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Objects: %v", err)
			}
			dep := find(objs, "Deployment", "op-ns")
			if len(dep) != 1 {
				t.Fatalf("want one Deployment in op-ns, got %v", keys(objs))
			}
			ann, _, _ := unstructured.NestedStringMap(dep[0].Object, "spec", "template", "metadata", "annotations")
			if ann["olm.targetNamespaces"] != tt.wantTargets || ann["olm.operatorNamespace"] != "op-ns" || ann["kept"] != "yes" || ann["alm-examples"] != "[]" {
				t.Errorf("pod template annotations = %v, want targets %q", ann, tt.wantTargets)
			}
			var roleNS []string
			for _, o := range objs {
				if o.GetKind() == "Role" {
					roleNS = append(roleNS, o.GetNamespace())
					if len(find(objs, "RoleBinding", o.GetNamespace())) != 1 {
						t.Errorf("Role in %s has no RoleBinding", o.GetNamespace())
					}
				}
			}
			sort.Strings(roleNS)
			if strings.Join(roleNS, ",") != strings.Join(tt.wantRoleNS, ",") {
				t.Errorf("Roles in %v, want %v", roleNS, tt.wantRoleNS)
			}
			// Cluster roles: the cluster permission, plus the namespaced one promoted when all namespaces are watched.
			wantCR := 1
			if tt.wantTargets == "" {
				wantCR = 2
			}
			if got := len(find(objs, "ClusterRole", "")) - 1; got != wantCR { // minus the shipped demo-view
				t.Errorf("%d generated ClusterRoles, want %d: %v", got, wantCR, keys(objs))
			}
		})
	}
}

func TestObjects_PlacementAndPassThrough(t *testing.T) {
	t.Parallel()
	objs, err := Objects(csvBundle(map[string]bool{"AllNamespaces": true}, ""), Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatal(err)
	}
	got := keys(objs)
	for _, want := range []string{
		"CustomResourceDefinition//demos.example.com", "ServiceAccount/op-ns/op", "ServiceAccount/op-ns/shipped",
		"ClusterRole//demo-view", "Service/op-ns/metrics", "Deployment/op-ns/demo-operator",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	if got[0] != "CustomResourceDefinition//demos.example.com" || got[len(got)-1] != "Deployment/op-ns/demo-operator" {
		t.Errorf("CRDs first and Deployments last, got %v", got)
	}
	for _, o := range find(objs, "ClusterRole", "") {
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		if o.GetName() != "demo-view" && len(rules) == 2 && !strings.Contains(fmt.Sprint(rules), "namespaces") {
			t.Errorf("promoted ClusterRole %s lacks the namespaces rule: %v", o.GetName(), rules)
		}
	}
}

func TestObjects_ShippedServiceAccountIsNotDuplicated(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	b["manifests/op-sa.yaml"] = []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: op\n  labels: {from: bundle}\n")
	objs, err := Objects(b, Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatal(err)
	}
	sas := find(objs, "ServiceAccount", "op-ns")
	if len(sas) != 2 {
		t.Fatalf("want op and shipped once each, got %v", keys(sas))
	}
	for _, sa := range sas {
		if sa.GetName() == "op" && sa.GetLabels()["from"] != "bundle" {
			t.Error("the bundle's own ServiceAccount must be used")
		}
	}
}

func TestObjects_AllProblemsAtOnceSorted(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, `  webhookdefinitions:
  - type: ValidatingAdmissionWebhook
    generateName: vdemo.example.com
    deploymentName: missing-operator
  apiservicedefinitions:
    owned:
    - group: metrics.example.com
      version: v1
  customresourcedefinitions:
    required:
    - name: others.example.com
`)
	b["manifests/v1beta1.yaml"] = []byte("apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: old.example.com\n")
	b["manifests/pod.yaml"] = []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: stray\n")
	b["manifests/sub/"] = nil
	b["manifests/sub/x.yaml"] = []byte("a: b")
	b["metadata/dependencies.yaml"] = []byte("dependencies:\n- type: olm.package\n  value: {packageName: etcd, version: '>=0.9.0'}\n")
	_, err := Objects(b, Options{InstallNamespace: "op-ns"})
	var cerr *Error
	if err == nil || !asError(err, &cerr) {
		t.Fatalf("want *Error, got %v", err)
	}
	want := []string{
		"CustomResourceDefinition old.example.com uses apiextensions.k8s.io/v1beta1",
		"owned APIService v1.metrics.example.com is not supported",
		"subdirectories are not allowed in manifests/: found manifests/sub",
		`unsupported resource "stray" with kind "Pod"`,
		`webhook vdemo.example.com names deployment "missing-operator", which the ClusterServiceVersion does not define`,
	}
	if !sort.StringsAreSorted(cerr.Problems) || len(cerr.Problems) != len(want) {
		t.Fatalf("problems not sorted or wrong count: %q", cerr.Problems)
	}
	for i, w := range want {
		if !strings.HasPrefix(cerr.Problems[i], w) {
			t.Errorf("problem %d = %q, want prefix %q", i, cerr.Problems[i], w)
		}
	}
	if !strings.HasPrefix(err.Error(), "convert registry+v1 bundle to plain+v0 bundle: bundle demo.v1.0.0: ") {
		t.Errorf("message prefix: %s", err)
	}
}

func TestNameFor_Limits(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 51, 52, 53, 62, 63, 64, 65, 200} {
		base := strings.Repeat("a", n-1) + "."
		got := nameFor(base, "x")
		if len(got) > maxNameLength {
			t.Errorf("base of %d: %q is %d long", n, got, len(got))
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("base of %d: %q: %v", n, got, errs)
		}
		if strings.Contains(got, ".-") || strings.Contains(got, "--") {
			t.Errorf("base of %d: %q has a separator run", n, got)
		}
	}
	if nameFor("a", "x") == nameFor("a", "y") {
		t.Error("different inputs must give different names")
	}
}

// TestYAML_Deterministic converts every real bundle that converts twice and
// compares the bytes; map order must never leak into the output.
func TestYAML_Deterministic(t *testing.T) {
	t.Parallel()
	dirs, _ := filepath.Glob(filepath.Join("..", "test", "testdata", "registry-v1-corpus", "*", "*"))
	if len(dirs) == 0 {
		t.Fatal("the registry+v1 corpus is missing from test/testdata")
	}
	dirs = append(dirs, filepath.Join("..", "test", "testdata", "rukpak-bundles", "registry", "valid"))
	converted := 0
	for _, dir := range dirs {
		files, err := ReadDir(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{InstallNamespace: "op-ns", Certificates: fixedCerts()}
		first, err := YAML(files, opts)
		if err != nil {
			continue
		}
		converted++
		for i := 0; i < 3; i++ {
			again, _ := YAML(files, opts)
			if !bytes.Equal(first, again) {
				t.Fatalf("%s: output differs between runs", dir)
			}
		}
	}
	if converted == 0 {
		t.Fatal("no bundle converted")
	}
	t.Logf("%d bundles converted byte-identically", converted)
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

// fixedCerts hands out the same certificate for a Service every time, as
// the adapter's stored certificates do.
func fixedCerts() CertSource {
	fresh := FreshCertificates(time.Now())
	issued := map[string]ServingCert{}
	return func(service, namespace string) (ServingCert, error) {
		key := namespace + "/" + service
		if c, ok := issued[key]; ok {
			return c, nil
		}
		c, err := fresh(service, namespace)
		issued[key] = c
		return c, err
	}
}

func TestObjects_TheSameCSVTwice(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	// operator-controller v0.9.0's test bundle: one CSV in two files,
	// indented differently.
	b["manifests/demo.v1.0.0.clusterserviceversion.yaml"] = []byte(strings.ReplaceAll(string(b["manifests/demo.csv.yaml"]), "\n    - type:", "\n    -   type:"))
	b["manifests/demo.v1.0.0.clusterserviceversion.yaml"] = []byte(strings.ReplaceAll(string(b["manifests/demo.v1.0.0.clusterserviceversion.yaml"]), "\n      supported:", "\n        supported:"))
	res, err := Convert(b, Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if len(find(res.Objects, "Deployment", "op-ns")) != 1 {
		t.Fatalf("objects %v", keys(res.Objects))
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool {
		return strings.Contains(n, "manifests/demo.csv.yaml and manifests/demo.v1.0.0.clusterserviceversion.yaml hold the same ClusterServiceVersion demo.v1.0.0")
	}) {
		t.Fatalf("notes %q", res.Notes)
	}

	b["manifests/demo.v1.0.0.clusterserviceversion.yaml"] = []byte(strings.ReplaceAll(string(b["manifests/demo.csv.yaml"]), "example.invalid/demo:v1", "example.invalid/demo:v2"))
	_, err = Convert(b, Options{InstallNamespace: "op-ns"})
	if err == nil || !strings.Contains(err.Error(), "more than one ClusterServiceVersion in manifests/ ([manifests/demo.csv.yaml manifests/demo.v1.0.0.clusterserviceversion.yaml]), and they differ") {
		t.Fatalf("two different CSVs: %v", err)
	}
}
