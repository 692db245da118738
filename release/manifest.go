package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// versionLabel is set on every object of the release, so an upgrade shows
// which release each object came from.
const versionLabel = "app.kubernetes.io/version"

// pinnedManifest is config/default with the adapter's image set to image
// (by digest) and every object labelled with the version.
func pinnedManifest(ctx context.Context, root, image, version string) ([]byte, error) {
	repo, digest, ok := strings.Cut(image, "@")
	if !ok {
		return nil, fmt.Errorf("image %q is not pinned by digest", image)
	}
	// kustomize takes only relative paths to other kustomizations, so the
	// wrapping kustomization lives inside the checkout.
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(filepath.Join(root, "bin"), "release-kustomization-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	base, err := filepath.Rel(dir, filepath.Join(root, "config", "default"))
	if err != nil {
		return nil, err
	}
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %s
images:
- name: rukpak-kapp
  newName: %s
  digest: %s
labels:
- pairs:
    %s: %q
`, filepath.ToSlash(base), repo, digest, versionLabel, version)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		return nil, err
	}
	out, err := runTool(ctx, root, "kustomize", "build", dir)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(out), "image: "+image+"\n") {
		return nil, fmt.Errorf("kustomize did not pin the image: config/manager must name image rukpak-kapp")
	}
	return out, nil
}

// runTool runs one of the tools test/tools builds into bin/ (make release
// builds kustomize and ytt first).
func runTool(ctx context.Context, root, tool string, args ...string) ([]byte, error) {
	bin := filepath.Join(root, "bin", tool)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s is missing: run `bash test/tools/build.sh %s` (make release does)", bin, tool)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}
