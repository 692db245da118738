package store

import (
	"context"
	"errors"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
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

	// A fetch that fails says so, and nothing was fetched.
	refused := errors.New("registry unreachable")
	m, err = Materialize(ctx, &fakeFetcher{err: refused}, bd, nil)
	if !errors.Is(err, refused) || m.Fetched || m.Resolved != nil {
		t.Fatalf("a failed fetch: %+v, %v", m, err)
	}
}
