package convert

import (
	"testing"
)

// FuzzObjects feeds arbitrary manifests and annotations to the converter:
// it may refuse them, but must never panic, and what it accepts must render.
func FuzzObjects(f *testing.F) {
	seed := csvBundle(map[string]bool{"AllNamespaces": true, "OwnNamespace": true}, webhookDefs)
	f.Add(string(seed["manifests/demo.csv.yaml"]), annotations, "op-ns", "")
	f.Add("kind: List\nitems:\n- kind: ClusterServiceVersion\n", annotations, "op-ns", "a")
	f.Add("{\"kind\":\"ClusterServiceVersion\",\"spec\":{\"installModes\":[{\"type\":\"X\"}]}}", "annotations: {}", "", "")
	f.Add("---\n---\napiVersion: v1\nkind: Secret\n", "annotations:\n  x: [", "Bad NS", "a,b")
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
	})
}
