package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

func TestHelpIsUsageOnStdout(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"help"}, {"run", "--help"}, {"render", "--help"}, {"convert", "--help"}, {"convert", "registry-v1", "--help"},
		{"migrate", "--help"}, {"migrate", "plan", "--help"}, {"version", "--help"}, {"help", "migrate", "plan"}, {"run", "-h"},
		{"upgrade", "plan", "--help"}, {"check", "--help"}, {"catalog", "--help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Execute(args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut.String())
			}
			if !strings.Contains(out.String(), "Usage:") || errOut.Len() != 0 {
				t.Errorf("stdout %q, stderr %q: want the usage on stdout only", out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "Exit codes:\n  0 ") || !strings.Contains(out.String(), "\n  2  the command line is not understood") {
				t.Errorf("stdout %q: want the exit codes at the end of the help", out.String())
			}
		})
	}
}

func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{nil, 2, "rukpak-kapp needs a command: catalog, check, completion, convert, migrate, render, run, upgrade, version"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"migrate"}, 2, "rukpak-kapp migrate needs a command: plan"},
		{[]string{"convert"}, 2, "needs a command: registry-v1"},
		{[]string{"convert", "registry-v1", "dir"}, 2, "convert registry-v1 needs --install-namespace"},
		{[]string{"render"}, 2, "render needs at least one -f"},
		{[]string{"render", "-f", "x", "--push", "r"}, 2, "go with --as-package"},
		{[]string{"run", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{[]string{"migrate", "plan", "-o", "xml"}, 2, `-o "xml": use text, json or yaml`},
		{[]string{"check", "-o", "wide"}, 2, `-o "wide": use text, json or yaml`},
		{[]string{"render", "-f", "/nonexistent/bd.yaml"}, 1, "no such file or directory"},
		{[]string{"convert", "registry-v1", "/nonexistent", "--install-namespace", "ns"}, 1, "no such file or directory"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Execute(tc.args, &out, &errOut); code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.says) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tc.says)
			}
		})
	}
}

// Every command, cobra's own included, exits 2 for a command line it does
// not understand: an unknown flag, an argument too many, an -o it prints
// nothing in, a flag it needs left out, a flag value it cannot take. The
// commands are walked, so one added later is held to it too. None of these
// runs far enough to reach a cluster or a registry.
func TestUsageErrorsExit2(t *testing.T) {
	var lines [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Hidden || c.Name() == "help" {
			// help prints "Unknown help topic" and the usage, as kubectl's.
			return
		}
		lines = append(lines,
			append(slices.Clone(path), "--no-such-flag"),
			// No command takes three arguments.
			append(slices.Clone(path), "one", "two", "three"))
		if c.Flags().Lookup("output") != nil {
			lines = append(lines, append(slices.Clone(path), "-o", "xml"))
		}
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(newRootCommand(), nil)
	lines = append(lines,
		[]string{}, []string{"migrate"}, []string{"catalog"}, []string{"convert"}, []string{"completion"},
		[]string{"convert", "registry-v1", "dir"},
		[]string{"convert", "registry-v1"},
		[]string{"render"},
		[]string{"render", "-f", "x", "-n", "ns"},
		[]string{"catalog", "render"},
		[]string{"catalog", "render", "--catalog", "d", "--image", "i"},
		[]string{"catalog", "push", "--catalog", "d"},
		[]string{"run", "--classes", "=bad"},
		[]string{"run", "--install-with", "helm"},
		[]string{"run", "--content-max-bytes", "lots"},
		[]string{"run", "--zap-log-level", "loud"},
		[]string{"migrate", "plan", "--classes", "=bad"},
	)
	for _, args := range lines {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Execute(args, &out, &errOut); code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut.String())
			}
			if !strings.Contains(errOut.String(), "--help' for usage") {
				t.Errorf("stderr %q does not point to --help", errOut.String())
			}
		})
	}
}

func TestVersionPrintsOnStdout(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Execute([]string{"version"}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), Version) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// The flags the release manifest's Deployment passes, and the others the
// tests and docs use, keep parsing.
func TestFlagsInUse(t *testing.T) {
	data, err := os.ReadFile("../../../config/manager/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	lines := [][]string{
		d.Spec.Template.Spec.Containers[0].Args,
		{"run", "--kubeconfig", "/k", "--context", "c", "--zap-devel=false", "--zap-log-level=debug", "--app-namespaces", "a,b", "--install-with", "packageinstall", "--kube-api-qps", "5", "--kube-api-burst", "9"},
		{"render", "-f", "a.yaml", "-f", "b.yaml", "--system-namespace", "s", "--as-package", "--push", "r", "--namespace", "n", "--installer-rbac"},
		{"migrate", "plan", "-o", "json", "--system-namespace", "s", "--classes", "kapp-plain=core-rukpak-io-plain", "--kubeconfig", "/k", "--context", "c"},
		{"convert", "registry-v1", "dir", "--install-namespace", "ns", "--watch-namespaces", "a,b"},
		{"convert", "registry-v1", "--install-namespace", "ns", "dir"},
		{"render", "-f", "a.yaml", "--as-package", "-n", "n"},
		{"catalog", "render", "--catalog", "d", "-n", "n", "--images-lock", "--operator-images=false"},
		{"catalog", "push", "--catalog", "d", "--repository", "r", "--operator-images=false"},
		{"check", "--system-namespace", "s", "-o", "yaml"},
		{"check", "--namespace", "s"},
		{"render", "-f", "a.yaml", "-o", "json"},
		{"render", "-f", "a.yaml", "--as-package", "-o", "yaml"},
		{"convert", "registry-v1", "dir", "--install-namespace", "ns", "-o", "json"},
		{"catalog", "render", "--catalog", "d", "-o", "json"},
		{"catalog", "render", "--catalog", "d", "--images-lock", "-o", "json"},
	}
	for _, args := range lines {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd, rest, err := newRootCommand().Find(args)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatalf("%s: %v", cmd.CommandPath(), err)
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Fatalf("%s: %v", cmd.CommandPath(), err)
			}
		})
	}
}

// TestExamples: every command's help has an Example, as kubectl's and
// kctrl's do, and every rukpak-kapp line of it names a command and flags
// that exist (a renamed flag fails here, not in a reader's terminal).
func TestExamples(t *testing.T) {
	t.Parallel()
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Name() == "help" || cmd.Name() == "completion" || cmd.Parent() != nil && cmd.Parent().Name() == "completion" {
			return
		}
		if strings.TrimSpace(cmd.Example) == "" {
			t.Errorf("%s has no Example", cmd.CommandPath())
		}
		for _, line := range strings.Split(cmd.Example, "\n") {
			line, _, _ = strings.Cut(strings.TrimSpace(line), " | ")
			rest, ok := strings.CutPrefix(line, "rukpak-kapp ")
			if !ok {
				continue
			}
			root := newRootCommand()
			found, args, err := root.Find(strings.Fields(rest))
			if err != nil || found == root {
				t.Errorf("%s: example %q names no command: %v", cmd.CommandPath(), line, err)
				continue
			}
			if err := found.ParseFlags(args); err != nil {
				t.Errorf("%s: example %q: %v", cmd.CommandPath(), line, err)
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
}

// TestEveryCommandInREADME: README's list of the CLI names every command
// a user runs (the adapter's own `run` aside).
func TestEveryCommandInREADME(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		switch cmd.Name() {
		case "help", "completion", "run":
			return
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		if !cmd.Runnable() || cmd.HasSubCommands() {
			return
		}
		name := strings.TrimPrefix(cmd.CommandPath(), "rukpak-kapp ")
		if !strings.Contains(readme, "`"+name+"`") && !strings.Contains(readme, "`rukpak-kapp "+name+"`") {
			t.Errorf("README.md's CLI list does not name %s", cmd.CommandPath())
		}
	}
	walk(newRootCommand())
}

// TestCommandsInDocsExist: every run of the CLI that README.md and
// docs/*.md show (a code span or a line of a fenced block that begins
// "rukpak-kapp ") names commands that exist, so a renamed or removed
// command cannot stay in a page.
func TestCommandsInDocsExist(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join("..", "..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "..", "..", "README.md"))
	span := regexp.MustCompile("`(?:bin/)?rukpak-kapp ([^`]+)`")
	line := regexp.MustCompile(`^\s*(?:\$ )?(?:bin/)?rukpak-kapp (.+)`)
	word := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	root := newRootCommand()
	runs := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		var calls []string
		fenced := false
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				if m := line.FindStringSubmatch(l); m != nil {
					calls = append(calls, m[1])
				}
				continue
			}
			for _, m := range span.FindAllStringSubmatch(l, -1) {
				calls = append(calls, m[1])
			}
		}
		for _, call := range calls {
			var words []string
			for _, w := range strings.Fields(call) {
				if !word.MatchString(w) {
					break
				}
				words = append(words, w)
			}
			if len(words) == 0 {
				continue
			}
			runs++
			cmd, rest, err := root.Find(words)
			if err != nil || cmd == root || (cmd.HasSubCommands() && len(rest) > 0) {
				t.Errorf("%s shows `rukpak-kapp %s`: no such command", filepath.Base(page), strings.Join(words, " "))
			}
		}
	}
	if runs == 0 {
		t.Error("found no run of the CLI in README.md or docs/: the patterns no longer match how the pages show commands")
	}
}
