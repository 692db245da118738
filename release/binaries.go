package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
)

// binariesCmd builds the image's binaries exactly as image and release do,
// without pushing anything: `make test` runs it for the second platform
// while its lanes wait on timers, so that the release suite's image build
// finds every package compiled instead of cross-compiling the whole graph
// on its critical path.
func binariesCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("binaries", flag.ContinueOnError)
	version := fs.String("version", "", "release version (semver, no leading v); default: 0.0.0-<commit time>-<commit>")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated OS/ARCH list")
	out := fs.String("out", "bin/release", "directory for rukpak-kapp-OS-ARCH")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	o := &options{version: strings.TrimPrefix(*version, "v"), root: root}
	if o.platforms, err = parsePlatforms(*platforms); err != nil {
		return err
	}
	dir, err := outDir(root, *out)
	if err != nil {
		return err
	}
	info, err := readBuildInfo(ctx, o)
	if err != nil {
		return err
	}
	for _, p := range o.platforms {
		bin, err := buildBinary(ctx, root, dir, p, info)
		if err != nil {
			return err
		}
		fmt.Println(bin)
	}
	return nil
}
