package bundlefiles

import (
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

const (
	dBundle   = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	dOperator = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func TestRelocations(t *testing.T) {
	t.Parallel()
	lock := ImagesLock{Bundle: "quay.io/op/bundle:v1", Images: map[string]string{"quay.io/op/bundle:v1": dBundle, "quay.io/op/manager:v1": dOperator}}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		ref         string
		want        map[string]string
		wantErr     string
	}{
		{name: "no lock: nothing relocated", ref: "mirror.example/r@" + dBundle},
		{name: "the bundle from where the lock found it", annotations: map[string]string{AnnotationImagesLock: lock.String()}, ref: "quay.io/op/bundle@" + dBundle},
		{name: "a copy: every image alongside it, by digest", annotations: map[string]string{AnnotationImagesLock: lock.String()}, ref: "mirror.example/r@" + dBundle,
			want: map[string]string{"quay.io/op/manager:v1": "mirror.example/r@" + dOperator}},
		{name: "a copy that is another image", annotations: map[string]string{AnnotationImagesLock: lock.String()}, ref: "mirror.example/r@" + dOperator,
			wantErr: "the bundle image quay.io/op/bundle:v1 is taken from mirror.example/r@" + dOperator + ", which is not the image the package repository was pushed with"},
		{name: "a copy by tag", annotations: map[string]string{AnnotationImagesLock: lock.String()}, ref: "mirror.example/r:v1", wantErr: "copy the repository with imgpkg copy"},
		{name: "a lock that cannot be read", annotations: map[string]string{AnnotationImagesLock: "{"}, ref: "mirror.example/r@" + dBundle, wantErr: "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
			bd.Spec.Source.Image = &rukpakv1alpha2.ImageSource{Ref: tc.ref}
			got, err := Relocations(bd)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
