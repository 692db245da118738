package convert

import (
	"testing"
)

// FuzzObjects feeds arbitrary manifests and metadata to the converter: it
// may refuse them, but must never panic, what it accepts must render, and
// the dependencies it reads must check. Every metadata file is read for
// annotations, dependencies and properties alike, so the annotations input
// reaches all three.
func FuzzObjects(f *testing.F) {
	seed := csvBundle(map[string]bool{"AllNamespaces": true, "OwnNamespace": true}, webhookDefs)
	f.Add(string(seed["manifests/demo.csv.yaml"]), annotations, "op-ns", "")
	f.Add("kind: List\nitems:\n- kind: ClusterServiceVersion\n", annotations, "op-ns", "a")
	f.Add("{\"kind\":\"ClusterServiceVersion\",\"spec\":{\"installModes\":[{\"type\":\"X\"}]}}", "annotations: {}", "", "")
	f.Add("---\n---\napiVersion: v1\nkind: Secret\n", "annotations:\n  x: [", "Bad NS", "a,b")
	f.Add(string(seed["manifests/demo.csv.yaml"]), annotations+"dependencies:\n- {type: olm.constraint, value: {any: {constraints: [{not: {constraints: [{package: {packageName: a, versionRange: '<1'}}]}}, {cel: {rule: x}}]}}}\n- {type: olm.package, value: {packageName: b, version: '>=1.0.0 <2.0.0 || 3.x'}}\nproperties:\n- {type: olm.gvk.required, value: {group: g, version: v1, kind: K}}\n", "op-ns", "")
	certs := fixedCerts()
	f.Fuzz(func(t *testing.T, csv, ann, ns, watch string) {
		files := map[string][]byte{
			"manifests/":                nil,
			"manifests/csv.yaml":        []byte(csv),
			"metadata/annotations.yaml": []byte(ann),
		}
		var targets []string
		if watch != "" {
			targets = []string{watch}
		}
		if _, err := YAML(files, Options{InstallNamespace: ns, WatchNamespaces: targets, Certificates: certs}); err != nil && err.Error() == "" {
			t.Fatal("an error must say something")
		}
		if m, err := ReadMetadata(files); err == nil {
			facts := Facts{Installed: []InstalledPackage{{Package: Package{Name: "a", Version: "0.5.0"}}, {Package: Package{Name: "b", Version: "not semver"}}}}
			for _, u := range CheckDependencies(m.Dependencies, facts) {
				if u.Message == "" {
					t.Fatal("an unmet dependency must say something")
				}
			}
		}
	})
}
