package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoBinaryPrebuilt(t *testing.T) {
	dir := t.TempDir()
	prebuilt := filepath.Join(dir, "rukpak-kapp")
	if err := os.WriteFile(prebuilt, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(PrebuiltEnv, dir)
	dest := filepath.Join(t.TempDir(), "built")

	// The root is not a module: had GoBinary built, it would have failed.
	got, err := GoBinary(context.Background(), t.TempDir(), "./cmd/rukpak-kapp", dest)
	if err != nil {
		t.Fatalf("prebuilt binary: %v", err)
	}
	if got != prebuilt {
		t.Errorf("got %s, want the prebuilt %s", got, prebuilt)
	}
	if _, err := os.Stat(dest); err == nil {
		t.Errorf("%s was built although a prebuilt binary was there", dest)
	}

	// One make forgot to build is an error that names it, not a build.
	_, err = GoBinary(context.Background(), t.TempDir(), "./test/harness/cmd/podsandbox", dest)
	if err == nil || !strings.Contains(err.Error(), "podsandbox was not built") {
		t.Errorf("missing prebuilt binary: got %v, want an error naming podsandbox", err)
	}
}

func TestGoBinaryBuilds(t *testing.T) {
	t.Setenv(PrebuiltEnv, "")
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "privatemounts")
	got, err := GoBinary(context.Background(), root, "./test/harness/cmd/privatemounts", dest)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(got); got != dest || err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("got %s (%v), want an executable built at %s", got, err, dest)
	}
}
