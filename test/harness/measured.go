package harness

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// MeasuredOn says when and at which commit a generated report was
// measured ("2026-12-06, commit 8e8bd44"), so a figure it carries has its
// date and commit; a tree with uncommitted changes says so.
func MeasuredOn(ctx context.Context) string {
	s := time.Now().UTC().Format("2006-01-02")
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return s + ", outside a git checkout"
	}
	s += ", commit " + strings.TrimSpace(string(out))
	if dirty, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(dirty) > 0 {
		s += " with uncommitted changes"
	}
	return s
}
