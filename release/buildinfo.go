package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// buildInfo is what makes a build reproducible: everything the image and
// bundles record comes from the commit, none from the clock.
type buildInfo struct {
	Version  string
	Revision string
	// Created is the commit time (or SOURCE_DATE_EPOCH): every file time
	// and created field of the images.
	Created time.Time
	Source  string
}

func readBuildInfo(ctx context.Context, o *options) (buildInfo, error) {
	rev, err := git(ctx, o.root, "rev-parse", "HEAD")
	if err != nil {
		return buildInfo{}, fmt.Errorf("read the commit to build (a git checkout is needed): %w", err)
	}
	created, err := sourceDate(ctx, o.root)
	if err != nil {
		return buildInfo{}, err
	}
	if dirty, _ := git(ctx, o.root, "status", "--porcelain", "--untracked-files=no"); dirty != "" {
		fmt.Fprintf(os.Stderr, "release: the work tree has uncommitted changes; the images name commit %s but are built from the changed files\n", rev[:12])
	}
	v := o.version
	if v == "" {
		v = "0.0.0-" + created.Format("20060102150405") + "-" + rev[:12]
	}
	return buildInfo{Version: v, Revision: rev, Created: created, Source: o.source}, nil
}

func sourceDate(ctx context.Context, root string) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds: %w", s, err)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	s, err := git(ctx, root, "log", "-1", "--format=%ct")
	if err != nil {
		return time.Time{}, fmt.Errorf("read the commit time: %w", err)
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("commit time %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("git %s: %w %s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out)), nil
}

// annotations are the OCI annotations of every image and index built.
func (b buildInfo) annotations(title string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    title,
		"org.opencontainers.image.source":   b.Source,
		"org.opencontainers.image.revision": b.Revision,
		"org.opencontainers.image.version":  b.Version,
		"org.opencontainers.image.created":  b.Created.Format(time.RFC3339),
	}
}
