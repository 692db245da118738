package convert

import (
	"strings"
	"testing"
)

// operator-registry reads every file under metadata/, whatever its name: a
// misnamed dependencies file still declares dependencies.
func TestMetadataDependenciesInAnyFileName(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	b["metadata/dependency.yaml"] = []byte("dependencies:\n- type: olm.package\n  value:\n    packageName: etcd\n    version: '>=0.9.0'\n")
	_, err := Objects(b, Options{InstallNamespace: "op-ns"})
	if err == nil || !strings.Contains(err.Error(), "olm.package packageName: etcd version: '>=0.9.0'") {
		t.Fatalf("error = %v, want the dependency of metadata/dependency.yaml", err)
	}
}
