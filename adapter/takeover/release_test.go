package takeover

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func testBD(class string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bd", UID: "bd-uid", Generation: 1, Finalizers: []string{"core.rukpak.io/delete-cached-bundle", "core.rukpak.io/cleanup-unpack-cache", "example.com/other"}},
		Spec:       rukpakv1alpha2.BundleDeploymentSpec{InstallNamespace: "apps", ProvisionerClassName: class},
	}
}

func controllerRef(uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "core.rukpak.io/v1alpha2", Kind: "BundleDeployment", Name: "bd", UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}}
}

// releaseSecret stores rel as Helm's Secret driver does.
func releaseSecret(t *testing.T, name string, rel map[string]any, gz bool, owner types.UID) corev1.Secret {
	t.Helper()
	data, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	if gz {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(data)
		_ = w.Close()
		data = buf.Bytes()
	}
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "rukpak-system", OwnerReferences: controllerRef(owner)},
		Type:       ReleaseSecretType,
		Data:       map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(data))},
	}
}

func helmRel(version int, status, manifest string) map[string]any {
	return map[string]any{
		"name": "bd", "namespace": "apps", "version": version, "manifest": manifest,
		"info":   map[string]any{"status": status},
		"config": map[string]any{"replicaCount": 2},
		"hooks":  []any{map[string]any{"name": "migrate", "kind": "Job"}},
		"chart": map[string]any{
			"metadata":     map[string]any{"name": "hello", "version": "0.1.0"},
			"templates":    []any{map[string]any{"name": "templates/cm.yaml", "data": []byte("kind: ConfigMap\n")}},
			"dependencies": []any{map[string]any{"metadata": map[string]any{"name": "sub"}, "templates": []any{map[string]any{"name": "templates/s.yaml", "data": []byte("x: {{ now }}")}}}},
		},
	}
}

func TestDecodeRelease(t *testing.T) {
	t.Parallel()
	for _, gz := range []bool{true, false} {
		s := releaseSecret(t, "sh.helm.release.v1.bd.v1", helmRel(1, "deployed", "---\nkind: ConfigMap\n"), gz, "bd-uid")
		got, err := DecodeRelease(&s)
		if err != nil {
			t.Fatalf("gzip=%v: %v", gz, err)
		}
		want := &Release{
			Secret: "sh.helm.release.v1.bd.v1", Name: "bd", Namespace: "apps", Version: 1, Status: "deployed",
			Manifest: "---\nkind: ConfigMap\n", Hooks: []string{"Job/migrate"}, Values: map[string]any{"replicaCount": float64(2)},
			Chart: Chart{Name: "hello", Version: "0.1.0", Subcharts: []string{"sub"}, Files: map[string][]byte{}, Templates: map[string][]byte{
				"templates/cm.yaml": []byte("kind: ConfigMap\n"), "charts/sub/templates/s.yaml": []byte("x: {{ now }}"),
			}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("gzip=%v (-want +got):\n%s", gz, diff)
		}
	}
}

func TestDecodeRelease_Broken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data map[string][]byte
		want string
	}{
		{"no release key", map[string][]byte{}, "has no release key"},
		{"not base64", map[string][]byte{"release": []byte("%%%")}, "decode base64"},
		{"truncated gzip", map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 8, 0, 0}))}, "sh.helm.release.v1.bd.v1"},
		{"not JSON", map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString([]byte("nope")))}, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeRelease(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.bd.v1"}, Data: tt.data})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestReleaseSecrets(t *testing.T) {
	t.Parallel()
	bd := testBD(rukpakv1alpha2.ClassPlain)
	mk := func(name string, owner types.UID) corev1.Secret {
		return releaseSecret(t, name, helmRel(1, "deployed", ""), true, owner)
	}
	wrongType := mk("sh.helm.release.v1.bd.v3", "bd-uid")
	wrongType.Type = corev1.SecretTypeOpaque
	secrets := []corev1.Secret{
		mk("sh.helm.release.v1.bd.v10", "bd-uid"),
		mk("sh.helm.release.v1.bd.v9", "bd-uid"),
		mk("sh.helm.release.v1.bd.v2", "an-earlier-bd-of-that-name"),
		mk("sh.helm.release.v1.bd-other.v1", "bd-uid"),
		mk("sh.helm.release.v1.bd.vlatest", "bd-uid"),
		wrongType,
	}
	var got []string
	for _, s := range ReleaseSecrets(bd, secrets) {
		got = append(got, s.Name)
	}
	if want := []string{"sh.helm.release.v1.bd.v9", "sh.helm.release.v1.bd.v10"}; !cmp.Equal(got, want) {
		t.Errorf("got %q, want %q (numeric order, this BD's only)", got, want)
	}
	if _, err := CurrentRelease(nil); err != ErrNoRelease {
		t.Errorf("CurrentRelease(none) = %v, want ErrNoRelease", err)
	}
}
