package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "image":
		err = imageCmd(ctx, os.Args[2:])
	case "release":
		err = releaseCmd(ctx, os.Args[2:])
	case "binaries":
		err = binariesCmd(ctx, os.Args[2:])
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: go run ./release image|release -registry REGISTRY [flags]
       go run ./release binaries [flags]
  image    build the rukpak-kapp image and push it to REGISTRY/rukpak-kapp:VERSION
  release  the image, plus the release manifest and the Carvel package (-out DIR)
  binaries only the image's binaries, built as image builds them (-out DIR)
`)
}

// options are the flags both commands take.
type options struct {
	registry  string
	version   string
	platforms []platform
	source    string
	root      string
}

func parseOptions(fs *flag.FlagSet, args []string) (*options, error) {
	registry := fs.String("registry", "", "registry (and path) to push to, e.g. ghcr.io/you; images go to REGISTRY/rukpak-kapp...")
	version := fs.String("version", "", "release version (semver, no leading v); default: 0.0.0-<commit time>-<commit>")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated OS/ARCH list of the image index")
	source := fs.String("source", "https://github.com/rukpak-kapp/rukpak-kapp", "repository URL for the org.opencontainers.image.source annotation")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *registry == "" {
		return nil, errors.New("no registry given: set REGISTRY (make image REGISTRY=ghcr.io/you), where the image and bundles are pushed")
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	o := &options{registry: strings.TrimSuffix(*registry, "/"), version: strings.TrimPrefix(*version, "v"), source: *source, root: root}
	if o.platforms, err = parsePlatforms(*platforms); err != nil {
		return nil, err
	}
	return o, nil
}

// parsePlatforms reads -platforms: a comma-separated OS/ARCH list.
func parsePlatforms(list string) ([]platform, error) {
	var out []platform
	for _, p := range strings.Split(list, ",") {
		pl, err := parsePlatform(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		out = append(out, pl)
	}
	return out, nil
}

// outDir is -out made absolute against the checkout and created.
func outDir(root, out string) (string, error) {
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	return out, os.MkdirAll(out, 0o755)
}

func imageCmd(ctx context.Context, args []string) error {
	o, err := parseOptions(flag.NewFlagSet("image", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	info, err := readBuildInfo(ctx, o)
	if err != nil {
		return err
	}
	ref, err := buildAndPushImage(ctx, o, info)
	if err != nil {
		return err
	}
	fmt.Println(ref)
	return nil
}

func releaseCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	out := fs.String("out", "bin/release", "directory for the manifest, Package, PackageMetadata and PackageRepository")
	o, err := parseOptions(fs, args)
	if err != nil {
		return err
	}
	dir, err := outDir(o.root, *out)
	if err != nil {
		return err
	}
	info, err := readBuildInfo(ctx, o)
	if err != nil {
		return err
	}
	image, err := buildAndPushImage(ctx, o, info)
	if err != nil {
		return err
	}
	fmt.Printf("image: %s\n", image)
	r, err := makeRelease(ctx, o, info, image)
	if err != nil {
		return err
	}
	for name, data := range r.files() {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("package bundle: %s\nrepository bundle: %s\nwrote %s/{%s}\n", r.packageBundle, r.repoBundle, dir, strings.Join(r.fileNames(), ","))
	return nil
}

// repoRoot is the top of the git checkout the command runs in; the
// release is built from it and names its commit.
func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", errors.New("run from inside a git checkout of rukpak-kapp: the release names its commit")
	}
	return strings.TrimSpace(string(out)), nil
}
