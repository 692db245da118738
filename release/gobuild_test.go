package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersionStamp: the binary the release builds says the version and
// revision it was stamped with. -X on a name that does not exist sets
// nothing and fails nothing, so a moved or renamed variable fails here
// instead of shipping a binary that says "dev".
func TestVersionStamp(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := buildBinary(context.Background(), root, t.TempDir(), platform{OS: runtime.GOOS, Arch: runtime.GOARCH},
		buildInfo{Version: "9.9.9", Revision: "0123abc"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	if got := strings.TrimSpace(string(out)); got != "9.9.9 (0123abc)" {
		t.Errorf("the release binary says %q, want 9.9.9 (0123abc)", got)
	}
}
