package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestReferencesOf(t *testing.T) {
	t.Parallel()
	plain := func(src rukpakv1alpha2.BundleSource) *rukpakv1alpha2.BundleDeployment {
		return &rukpakv1alpha2.BundleDeployment{Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha2.ClassPlain, Source: src}}
	}
	auth := rukpakv1alpha2.Authorization{Secret: rukpakv1alpha2.LocalObjectReference{Name: "auth"}}
	tests := []struct {
		name string
		bd   *rukpakv1alpha2.BundleDeployment
		want []string
	}{
		{"image without a pull secret", plain(rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "r/b:v1"}}), nil},
		{"image pull secret", plain(rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "r/b:v1", ImagePullSecretName: "pull"}}), []string{"secret/pull"}},
		{"http auth", plain(rukpakv1alpha2.BundleSource{Type: "http", HTTP: &rukpakv1alpha2.HTTPSource{URL: "https://x", Auth: auth}}), []string{"secret/auth"}},
		{"git auth", plain(rukpakv1alpha2.BundleSource{Type: "git", Git: &rukpakv1alpha2.GitSource{Repository: "https://x", Auth: auth}}), []string{"secret/auth"}},
		{"configMaps", plain(rukpakv1alpha2.BundleSource{Type: "configMaps", ConfigMaps: []rukpakv1alpha2.ConfigMapSource{
			{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "a"}}, {ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "b"}},
		}}), []string{"configmap/a", "configmap/b"}},
		{"fetched by the adapter: kapp-controller reads only content Secrets", plain(rukpakv1alpha2.BundleSource{Type: "image",
			Image: &rukpakv1alpha2.ImageSource{Ref: "r/b:v1", ImagePullSecretName: "pull", InsecureSkipTLSVerify: true}}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, r := range References(tt.bd) {
				got = append(got, r.String())
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("references (-want +got):\n%s", d)
			}
		})
	}
}

func TestCopyOf(t *testing.T) {
	t.Parallel()
	orig := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "rukpak-system", Name: "pull", Labels: map[string]string{"user": "label"}},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{"k": []byte("v")}}
	a := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "uid-a"}}
	b := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "uid-b"}}

	first := copyOf(orig, "apps-0", a, &corev1.Secret{}).(*corev1.Secret)
	if first.Namespace != "apps-0" || first.Type != orig.Type || first.Labels[LabelMirror] != "true" || first.Labels["user"] != "" {
		t.Errorf("copy = %+v", first)
	}
	if len(first.OwnerReferences) != 1 || first.OwnerReferences[0].UID != "uid-a" || first.OwnerReferences[0].Controller != nil {
		t.Errorf("owners = %+v, want a alone, not as controller", first.OwnerReferences)
	}
	if !sameCopy(first, copyOf(orig, "apps-0", a, first)) {
		t.Error("a copy that is current is written again")
	}
	shared := copyOf(orig, "apps-0", b, first)
	if len(shared.GetOwnerReferences()) != 2 || sameCopy(first, shared) {
		t.Errorf("a second reader must be added as an owner: %+v", shared.GetOwnerReferences())
	}
	changed := orig.DeepCopy()
	changed.Data["k"] = []byte("w")
	if sameCopy(first, copyOf(changed, "apps-0", a, first)) {
		t.Error("changed data is not copied")
	}
}
