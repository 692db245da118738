package convert

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The operator's images named by a relocation run from the copy, in
// containers, init containers and RELATED_IMAGE_ values; others stay.
func TestObjects_ImagesRelocated(t *testing.T) {
	t.Parallel()
	extra := `                env:
                - {name: RELATED_IMAGE_OPERAND, value: example.invalid/operand:v1}
                - {name: OTHER, value: example.invalid/unrelated:v1}
              initContainers:
              - name: init
                image: example.invalid/demo:v1
`
	for _, tc := range []struct {
		name   string
		images map[string]string
		want   [4]string // container, init, operand env, other env
	}{
		{name: "none", want: [4]string{"example.invalid/demo:v1", "example.invalid/demo:v1", "example.invalid/operand:v1", "example.invalid/unrelated:v1"}},
		{name: "relocated", images: map[string]string{"example.invalid/demo:v1": "mirror.invalid/r@sha256:aa", "example.invalid/operand:v1": "mirror.invalid/r@sha256:bb"},
			want: [4]string{"mirror.invalid/r@sha256:aa", "mirror.invalid/r@sha256:aa", "mirror.invalid/r@sha256:bb", "example.invalid/unrelated:v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := csvBundle(map[string]bool{"AllNamespaces": true}, "")
			files["manifests/demo.csv.yaml"] = append(files["manifests/demo.csv.yaml"], extra...)
			objs, err := Objects(files, Options{InstallNamespace: "op-ns", Images: tc.images})
			if err != nil {
				t.Fatal(err)
			}
			deps := find(objs, "Deployment", "op-ns")
			if len(deps) != 1 {
				t.Fatalf("deployments: %v", keys(objs))
			}
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(deps[0].Object, &d); err != nil {
				t.Fatal(err)
			}
			pod := d.Spec.Template.Spec
			got := [4]string{pod.Containers[0].Image, pod.InitContainers[0].Image, pod.Containers[0].Env[0].Value, pod.Containers[0].Env[1].Value}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
