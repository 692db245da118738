package kube

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
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

// Mirror keeps the copy of a referenced Secret in the App's namespace:
// created, left alone while current, updated, replaced when its type
// changed (which no update can do), deleted when the original is gone;
// an object of the same name that is not a copy is never touched.
func TestMirrorKeepsTheCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pull := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "pull"},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}}
	k := fakekube.New(nil, pull)
	bd := imageBD("web", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Image.ImagePullSecretName = "pull" })
	mirror := func(step string, want ...string) *corev1.Secret {
		t.Helper()
		k.Reset()
		if err := Mirror(ctx, k.Client, systemNS, appNS, bd); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := k.Wrote(); !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
			t.Fatalf("%s: wrote %v, want %v", step, got, want)
		}
		cp := &corev1.Secret{}
		if err := k.Raw.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "pull"}, cp); err != nil {
			return nil
		}
		return cp
	}
	original := func(change func(*corev1.Secret)) {
		t.Helper()
		get(t, k, pull)
		change(pull)
		if err := k.Raw.Update(ctx, pull); err != nil {
			t.Fatal(err)
		}
	}

	cp := mirror("create", "create Secret "+appNS+"/pull")
	if cp.Labels[LabelMirror] != "true" || cp.Type != pull.Type || !cmp.Equal(cp.Data, pull.Data) ||
		len(cp.OwnerReferences) != 1 || cp.OwnerReferences[0].UID != bd.UID {
		t.Fatalf("copy = %+v", cp)
	}
	mirror("current")

	original(func(s *corev1.Secret) { s.Data[corev1.DockerConfigJsonKey] = []byte(`{"auths":{"r":{}}}`) })
	if cp = mirror("update", "update Secret "+appNS+"/pull"); string(cp.Data[corev1.DockerConfigJsonKey]) != `{"auths":{"r":{}}}` {
		t.Fatalf("copy data %q after the update", cp.Data)
	}

	// A Secret's type cannot change in place: the user made it again.
	if err := k.Raw.Delete(ctx, pull); err != nil {
		t.Fatal(err)
	}
	pull = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "pull"}, Type: corev1.SecretTypeOpaque, Data: pull.Data}
	if err := k.Raw.Create(ctx, pull); err != nil {
		t.Fatal(err)
	}
	if cp = mirror("type changed", "delete Secret "+appNS+"/pull", "create Secret "+appNS+"/pull"); cp.Type != corev1.SecretTypeOpaque {
		t.Fatalf("copy type %q, want Opaque", cp.Type)
	}

	if err := k.Raw.Delete(ctx, pull); err != nil {
		t.Fatal(err)
	}
	if cp = mirror("original gone", "delete Secret "+appNS+"/pull"); cp != nil {
		t.Fatal("the copy of a deleted original stays")
	}
	mirror("original and copy gone")
}

func TestMirrorLeavesAnotherObjectAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "bundle"}, Data: map[string]string{"mine": "yes"}}
	k := fakekube.New(nil, theirs,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "bundle"}, Data: map[string]string{"manifests.yaml": "x"}})
	bd := imageBD("cms", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeConfigMaps,
			ConfigMaps: []rukpakv1alpha2.ConfigMapSource{{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "bundle"}, Path: "manifests"}}}
	})
	for _, ns := range []string{appNS, systemNS} {
		if err := Mirror(ctx, k.Client, systemNS, ns, bd); err != nil {
			t.Fatal(err)
		}
	}
	// Its original gone, it still is not the adapter's to delete.
	if err := k.Raw.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "bundle"}}); err != nil {
		t.Fatal(err)
	}
	if err := Mirror(ctx, k.Client, systemNS, appNS, bd); err != nil {
		t.Fatal(err)
	}
	if got := k.Wrote(); len(got) != 0 {
		t.Fatalf("wrote %v", got)
	}
	get(t, k, theirs)
	if theirs.Data["mine"] != "yes" || theirs.Labels[LabelMirror] != "" {
		t.Fatalf("their ConfigMap changed: %+v", theirs)
	}
}
