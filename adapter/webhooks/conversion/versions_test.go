package conversion

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// review sends objects through the handler Add registers, as kube-apiserver
// does, and returns the converted objects.
func review(t *testing.T, desired string, objs ...any) []json.RawMessage {
	t.Helper()
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(conversion.NewWebhookHandler(scheme, conversion.NewRegistry()))
	defer srv.Close()
	req := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apiextensionsv1.ConversionRequest{UID: "1", DesiredAPIVersion: desired},
	}
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		req.Request.Objects = append(req.Request.Objects, runtime.RawExtension{Raw: raw})
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(srv.URL+Path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out apiextensionsv1.ConversionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Response == nil || out.Response.Result.Status != metav1.StatusSuccess {
		t.Fatalf("conversion failed: %+v", out.Response)
	}
	raws := make([]json.RawMessage, len(out.Response.ConvertedObjects))
	for i, o := range out.Response.ConvertedObjects {
		raws[i] = o.Raw
	}
	return raws
}

func TestConversionWebhook_v1alpha1ToStoredAndBack(t *testing.T) {
	v1 := &rukpakv1alpha1.BundleDeployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: rukpakv1alpha1.GroupVersion.String(), Kind: "BundleDeployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "olm-crds", UID: "u1", Generation: 2},
		Spec: rukpakv1alpha1.BundleDeploymentSpec{
			ProvisionerClassName: rukpakv1alpha1.ClassPlain,
			Template: rukpakv1alpha1.BundleTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "olm"}},
				Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassRegistry, Source: rukpakv1alpha1.BundleSource{
					Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: "registry.example/olm:v1"}}},
			},
		},
		Status: rukpakv1alpha1.BundleDeploymentStatus{ActiveBundle: "olm-crds-abc"},
	}
	stored := review(t, rukpakv1alpha2.GroupVersion.String(), v1)
	var v2 rukpakv1alpha2.BundleDeployment
	if err := json.Unmarshal(stored[0], &v2); err != nil {
		t.Fatal(err)
	}
	if v2.APIVersion != rukpakv1alpha2.GroupVersion.String() || v2.Spec.ProvisionerClassName != rukpakv1alpha1.ClassRegistry ||
		v2.Spec.Source.Image.Ref != "registry.example/olm:v1" || v2.Annotations[rukpakv1alpha1.AnnotationActiveBundle] != "olm-crds-abc" {
		t.Fatalf("stored form: %+v", v2)
	}
	back := review(t, rukpakv1alpha1.GroupVersion.String(), &v2)
	var again rukpakv1alpha1.BundleDeployment
	if err := json.Unmarshal(back[0], &again); err != nil {
		t.Fatal(err)
	}
	again.TypeMeta = v1.TypeMeta
	if got, want := mustJSON(t, again), mustJSON(t, v1); got != want {
		t.Fatalf("round trip:\n got %s\nwant %s", got, want)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
