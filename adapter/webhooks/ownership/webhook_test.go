package ownership

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
)

// bd is a BundleDeployment of the given annotations and bundle image.
func bd(annotations map[string]string, image string) runtime.RawExtension {
	o := map[string]any{
		"apiVersion": "core.rukpak.io/v1alpha2",
		"kind":       "BundleDeployment",
		"metadata":   map[string]any{"name": "etcd", "annotations": annotations},
		"spec": map[string]any{
			"installNamespace": "etcd",
			"source":           map[string]any{"type": "image", "image": map[string]any{"ref": image}},
		},
	}
	raw, _ := json.Marshal(o)
	return runtime.RawExtension{Raw: raw}
}

func owned(extra map[string]string) map[string]string {
	a := map[string]string{
		catalog.AnnotationOperatorInstall:           "operators/etcd",
		catalog.AnnotationOperatorInstallGeneration: "3",
		catalog.AnnotationVersion:                   "1.0.0",
	}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

func TestHandle(t *testing.T) {
	const v1, v2 = "registry.example/etcd@sha256:1111", "registry.example/etcd@sha256:2222"
	for _, tc := range []struct {
		name         string
		op           admissionv1.Operation
		old, new     runtime.RawExtension
		fieldManager string
		allowed      bool
	}{
		{name: "a create is not judged", op: admissionv1.Create, new: bd(owned(nil), v1), allowed: true},
		{name: "a BundleDeployment of no install", op: admissionv1.Update, old: bd(nil, v1), new: bd(nil, v2), allowed: true},
		{name: "a label change leaves spec and entry", op: admissionv1.Update, old: bd(owned(nil), v1), new: bd(owned(map[string]string{"team": "a"}), v1), allowed: true},
		{name: "a bundle changed by hand", op: admissionv1.Update, old: bd(owned(nil), v1), new: bd(owned(nil), v2), fieldManager: "kubectl-edit"},
		{name: "an entry changed by hand", op: admissionv1.Update, old: bd(owned(nil), v1), new: bd(owned(map[string]string{catalog.AnnotationVersion: "2.0.0"}), v1), fieldManager: "kubectl-annotate"},
		{name: "a generation annotation changed by hand", op: admissionv1.Update, old: bd(owned(nil), v1), new: bd(owned(map[string]string{catalog.AnnotationOperatorInstallGeneration: "4"}), v1)},
		{name: "the install's own write", op: admissionv1.Update, old: bd(owned(nil), v1), new: bd(owned(map[string]string{catalog.AnnotationVersion: "2.0.0"}), v2), fieldManager: fieldowner.Name, allowed: true},
		{name: "the annotation removed takes it out of the install's hands", op: admissionv1.Update, old: bd(owned(nil), v1),
			new: bd(map[string]string{catalog.AnnotationVersion: "1.0.0"}, v2), fieldManager: "kubectl-edit", allowed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := json.Marshal(map[string]string{"fieldManager": tc.fieldManager})
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: tc.op, OldObject: tc.old, Object: tc.new, Options: runtime.RawExtension{Raw: opts},
			}}
			got := handler{}.Handle(context.Background(), req)
			if got.Allowed != tc.allowed {
				t.Fatalf("allowed = %v, want %v (%s)", got.Allowed, tc.allowed, got.Result.Message)
			}
			if !tc.allowed {
				msg := got.Result.Message
				for _, want := range []string{"operators/etcd", "kctrl package installed update -n operators -i etcd", catalog.AnnotationOperatorInstall} {
					if !strings.Contains(msg, want) {
						t.Errorf("refusal %q does not name %q", msg, want)
					}
				}
			}
		})
	}
}
