package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
)

// PrebuiltEnv names the directory where `make test` builds this module's
// binaries once, before its lanes start (the adapter, the pod sandbox, the
// private-mount helper). Four lanes on two cores would otherwise link each
// of them once per harness, side by side.
const PrebuiltEnv = "RUKPAK_KAPP_PREBUILT"

// GoBinary returns a binary of this module's package pkg ("./cmd/rukpak-kapp"):
// the one in $RUKPAK_KAPP_PREBUILT when that is set, otherwise one built now
// at dest (a suite run on its own with go test).
func GoBinary(ctx context.Context, root, pkg, dest string) (string, error) {
	name := path.Base(pkg)
	if dir := os.Getenv(PrebuiltEnv); dir != "" {
		bin := filepath.Join(dir, name)
		// A missing one is make's mistake, not a reason to build: building here
		// would hide that the lanes compile side by side again.
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s is set but %s was not built: %w", PrebuiltEnv, name, err)
		}
		return bin, nil
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", dest, pkg)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	return dest, nil
}
