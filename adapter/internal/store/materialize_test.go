package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestMaterialize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bd := plainBD("web")

	m, err := Materialize(ctx, &fakeFetcher{files: plainFiles("one")}, bd, nil)
	if err != nil || !m.Fetched || m.Resolved == nil || m.Layout == nil || len(m.Files) == 0 {
		t.Fatalf("a valid bundle: %+v, %v", m, err)
	}
	chunks, err := m.Pack(bd)
	if err != nil || len(chunks) == 0 {
		t.Fatalf("Pack: %v, %v", chunks, err)
	}

	// Content that is no bundle: the error is the content's, and the
	// source it came from is named.
	m, err = Materialize(ctx, &fakeFetcher{files: noManifests}, bd, nil)
	if err == nil || !scope.Permanent(err) || !m.Fetched || m.Resolved == nil {
		t.Fatalf("no manifests/: %+v, %v; want a permanent error with the source", m, err)
	}

	// A relocated copy that is not the image the catalog pushed is the
	// source's permanent failure, named, and nothing is pulled from it.
	copied := plainBD("copied")
	copied.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "mirror.example/r@sha256:" + strings.Repeat("2", 64)}}
	copied.Annotations = map[string]string{bundlefiles.AnnotationImagesLock: bundlefiles.ImagesLock{Bundle: "quay.example/op/bundle:v1",
		Images: map[string]string{"quay.example/op/bundle:v1": "sha256:" + strings.Repeat("1", 64)}}.String()}
	wrong := &fakeFetcher{files: plainFiles("one")}
	m, err = Materialize(ctx, wrong, copied, nil)
	if f := scope.FailureOf(err); err == nil || f.Kind != status.SourceFailed || f.Retrying || !strings.Contains(err.Error(), "the bundle image quay.example/op/bundle:v1 is taken from mirror.example/r@sha256:2222") || wrong.fetches != 0 || m.Fetched {
		t.Fatalf("a copy of another digest: %+v, %v, %d fetches", m, err, wrong.fetches)
	}

	// A fetch that fails says so, and nothing was fetched.
	refused := errors.New("registry unreachable")
	m, err = Materialize(ctx, &fakeFetcher{err: refused}, bd, nil)
	if !errors.Is(err, refused) || m.Fetched || m.Resolved != nil {
		t.Fatalf("a failed fetch: %+v, %v", m, err)
	}
}
