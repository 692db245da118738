package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func corpusFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := ReadDir(os.DirFS(filepath.Join("..", "test", "testdata", "registry-v1-corpus", dir)))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// cluster-aas-operator 0.1.5 ships two ClusterRoles without apiVersion.
// OLM reads the kinds it creates itself (RBAC, ServiceAccounts, Services,
// ConfigMaps, Secrets) into their one API type whatever apiVersion says,
// so it installs them; the converter fills the apiVersion in.
func TestMissingAPIVersionOfKindsOLMCreatesByKind(t *testing.T) {
	t.Parallel()
	r, err := Convert(corpusFiles(t, "cluster-aas-operator/0.1.5"), Options{InstallNamespace: "op-ns", Certificates: fixedCerts()})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	for _, name := range []string{"claas-argocd-cluster-role", "cluster-templates-user-ct"} {
		found := false
		for _, o := range find(r.Objects, "ClusterRole", "") {
			if o.GetName() == name {
				found = true
				if o.GetAPIVersion() != "rbac.authorization.k8s.io/v1" {
					t.Errorf("%s: apiVersion %q", name, o.GetAPIVersion())
				}
			}
		}
		if !found {
			t.Errorf("ClusterRole %s missing", name)
		}
	}
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, `ClusterRole "claas-argocd-cluster-role" has no apiVersion; it is installed as rbac.authorization.k8s.io/v1`) {
		t.Errorf("notes = %q", r.Notes)
	}
	// A kind OLM creates through discovery still needs its apiVersion.
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	b["manifests/rule.yaml"] = []byte("kind: PrometheusRule\nmetadata: {name: alerts}\n")
	if _, err := Convert(b, Options{InstallNamespace: "op-ns"}); err == nil || !strings.Contains(err.Error(), `PrometheusRule "alerts" has no apiVersion`) {
		t.Errorf("error = %v", err)
	}
}

// ack-secretsmanager-controller 1.4.1 and ecr-secret-operator 0.6.0 ship
// samples of their own API (kinds named Secret). The operator does not
// need them, and OLM does not create them either (it reads an object of
// kind Secret into a core Secret): they are left out, with a note.
func TestCustomResourcesOfTheBundlesOwnAPIAreLeftOut(t *testing.T) {
	t.Parallel()
	for dir, samples := range map[string][]string{
		"ack-secretsmanager-controller/1.4.1": {"example"},
		"ecr-secret-operator/0.6.0":           {"ecr-secret", "ecr-secret-sample"},
	} {
		r, err := Convert(corpusFiles(t, dir), Options{InstallNamespace: "op-ns"})
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		for _, o := range r.Objects {
			if o.GetKind() == "Secret" && o.GroupVersionKind().Group != "" {
				t.Errorf("%s: %s %s is installed", dir, o.GetAPIVersion(), o.GetName())
			}
		}
		notes := strings.Join(r.Notes, "\n")
		for _, name := range samples {
			if !strings.Contains(notes, `Secret "`+name+`" is a custom resource of the bundle's own API`) {
				t.Errorf("%s: no note for %s: %q", dir, name, r.Notes)
			}
		}
	}
}

// percona-server-mongodb-operator 1.18.0 has an install mode type with a
// typo ("OwnNamespacejl"). OLM only ever asks for the four known types,
// so the entry is ignored with a note, and the bundle installs with the
// modes it does support.
func TestUnknownInstallModeTypeIsIgnored(t *testing.T) {
	t.Parallel()
	files := corpusFiles(t, "percona-server-mongodb-operator/1.18.0")
	r, err := Convert(files, Options{InstallNamespace: "op-ns", WatchNamespaces: []string{"team-a"}})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], `install mode type "OwnNamespacejl" is not one of [AllNamespaces OwnNamespace SingleNamespace MultiNamespace]`) {
		t.Errorf("notes = %q", r.Notes)
	}
	// Its only real mode needs the namespace to watch.
	_, err = Convert(files, Options{InstallNamespace: "op-ns"})
	var cerr *Error
	if !asError(err, &cerr) || len(cerr.Problems) != 1 || !strings.Contains(cerr.Problems[0], "supported install modes [SingleNamespace] need the namespaces to watch") {
		t.Errorf("error = %v", err)
	}
}
