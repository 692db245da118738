package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

type platform struct{ OS, Arch string }

func (p platform) String() string { return p.OS + "/" + p.Arch }

func parsePlatform(s string) (platform, error) {
	osName, arch, ok := strings.Cut(s, "/")
	if !ok || osName != "linux" || (arch != "amd64" && arch != "arm64") {
		return platform{}, fmt.Errorf("platform %q: only linux/amd64 and linux/arm64 are built", s)
	}
	return platform{OS: osName, Arch: arch}, nil
}

// versionPackage holds the CLI's Version and Revision, which the build
// sets with -X (TestVersionStamp runs the binary it makes).
const versionPackage = "github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/cmd"

// buildBinary compiles cmd/rukpak-kapp for p into dir. Everything that
// could make two builds of one commit differ is fixed here rather than
// taken from the caller's environment: no cgo, no paths of this machine
// (-trimpath), no build ID, the baseline instruction set, and no GOFLAGS.
// No debug information is generated (-dwarf=false) since -w would strip it:
// the Makefile builds everything with the same settings, so make test's
// suites and this build share one build cache.
func buildBinary(ctx context.Context, root, dir string, p platform, info buildInfo) (string, error) {
	out := filepath.Join(dir, "rukpak-kapp-"+p.OS+"-"+p.Arch)
	// The revision is passed explicitly: go build's own VCS stamp depends on
	// the caller's settings (-buildvcs) and would add vcs.modified.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-gcflags=all=-dwarf=false", "-mod=readonly", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X "+versionPackage+".Version="+info.Version+" -X "+versionPackage+".Revision="+info.Revision,
		"-o", out, "./cmd/rukpak-kapp")
	cmd.Dir = root
	cmd.Env = append(withoutGoSettings(os.Environ()),
		"CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=", "GOEXPERIMENT=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, ">> go build rukpak-kapp for %s\n", p)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build rukpak-kapp for %s: %w", p, err)
	}
	return out, nil
}

// withoutGoSettings drops the caller's settings that change what the
// compiler produces.
func withoutGoSettings(env []string) []string {
	drop := map[string]bool{"CGO_ENABLED": true, "GOOS": true, "GOARCH": true, "GOAMD64": true, "GOARM64": true, "GOFLAGS": true, "GOEXPERIMENT": true}
	var out []string
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			out = append(out, kv)
		}
	}
	return out
}
