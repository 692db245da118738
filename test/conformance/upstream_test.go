package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// rukpakVersion is the rukpak whose suite runs: the one test/tools/rukpak-e2e pins.
const rukpakVersion = "v0.24.0"

// upstreamRun is rukpak's suite running alongside this suite's own specs,
// which install nothing it looks at (BeforeSuite starts it).
type upstreamRun struct {
	listed *types.Report
	done   chan struct{}
	ran    *types.Report
	err    error
	took   time.Duration
}

// startUpstream lists the suite's specs, then runs it in the background
// with the specs that need a Pod skipped.
func startUpstream(ctx context.Context) (*upstreamRun, error) {
	bin := filepath.Join(env.Root, "bin", "rukpak-e2e.test")
	// The specs read ../../testdata: they run from their package's
	// directory, as `go test` runs them.
	dir := filepath.Join(env.RukpakE2E.ModuleDir, "test", "e2e")
	listed, err := runUpstream(ctx, bin, dir, "dry-run", "-ginkgo.dry-run")
	if err != nil {
		return nil, err
	}
	// Ginkgo matches --skip against the suite's description and the
	// spec's text.
	var args []string
	for _, text := range slices.Sorted(maps.Keys(upstream)) {
		if upstream[text].skip != "" {
			args = append(args, "-ginkgo.skip=^"+regexp.QuoteMeta(listed.SuiteDescription+" "+text)+"$")
		}
	}
	run := &upstreamRun{listed: listed, done: make(chan struct{})}
	go func() {
		defer close(run.done)
		start := time.Now()
		run.ran, run.err = runUpstream(ctx, bin, dir, "run", args...)
		run.took = time.Since(start)
	}()
	return run, nil
}

// upstreamSpec waits for rukpak's suite and checks each spec's outcome.
func upstreamSpec(ctx context.Context) {
	var names []string
	for _, s := range specsOf(upstreamRan.listed) {
		names = append(names, specText(s))
	}
	Expect(names).To(ConsistOf(slices.Collect(maps.Keys(upstream))), "expectations_test.go names each spec of the suite, and only those")
	for text, want := range upstream {
		if want.skip != "" {
			Expect(replacements).To(HaveKey(want.replacedBy), "the spec that checks instead of %q", text)
		}
	}
	select {
	case <-upstreamRan.done:
	case <-ctx.Done():
		Fail("rukpak's suite did not end in time")
	}
	Expect(upstreamRan.err).NotTo(HaveOccurred())
	results := judge(specsOf(upstreamRan.ran))
	if path := os.Getenv("CONFORMANCE_REPORT"); path != "" {
		Expect(os.WriteFile(path, []byte(reportMarkdown(results, upstreamRan.took, harness.MeasuredOn(ctx))), 0o644)).To(Succeed())
	}
	var unexpected []string
	for _, r := range results {
		if r.unexpected != "" {
			unexpected = append(unexpected, fmt.Sprintf("%s (%s:%d): %s", r.text, r.file, r.line, r.unexpected))
		}
	}
	Expect(unexpected).To(BeEmpty(), "specs whose outcome is not the expected one; the suite's output is in %s", filepath.Join(env.LogDir(), "rukpak-e2e-run.log"))
}

// runUpstream runs the suite's test binary from dir with cluster-admin's
// kubeconfig, and returns its JSON report. The binary exits non-zero when
// a spec fails, which is expected of the listed differences.
func runUpstream(ctx context.Context, bin, dir, what string, args ...string) (*types.Report, error) {
	report := filepath.Join(env.Dir, "rukpak-e2e-"+what+".json")
	log, err := os.Create(filepath.Join(env.LogDir(), "rukpak-e2e-"+what+".log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-test.timeout=25m", "-ginkgo.v", "-ginkgo.no-color", "-ginkgo.json-report=" + report}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(withoutProxy(os.Environ()), "KUBECONFIG="+env.ControlPlane.Kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	runErr := cmd.Run()
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, fmt.Errorf("rukpak's suite wrote no report (%v; see %s): %w", runErr, log.Name(), err)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil || len(reports) != 1 {
		return nil, fmt.Errorf("read the report of rukpak's suite (%d reports): %v", len(reports), err)
	}
	return &reports[0], nil
}

func withoutProxy(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(name) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// specsOf are the report's specs (Its), without the suite's setup nodes.
func specsOf(r *types.Report) []types.SpecReport {
	var specs []types.SpecReport
	for _, s := range r.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt {
			specs = append(specs, s)
		}
	}
	return specs
}

// specText is a spec's full text, as --ginkgo.focus and --ginkgo.skip see it.
func specText(s types.SpecReport) string {
	return strings.Join(append(slices.Clone(s.ContainerHierarchyTexts), s.LeafNodeText), " ")
}

// result is one spec's outcome against its expectation.
type result struct {
	text, file string
	line       int
	want       expected
	state      types.SpecState
	// unexpected says how the outcome differs from the expected one; empty
	// when it does not.
	unexpected string
	runTime    time.Duration
}

func judge(specs []types.SpecReport) []result {
	var out []result
	for _, s := range specs {
		text := specText(s)
		want := upstream[text]
		r := result{text: text, file: filepath.Base(s.LeafNodeLocation.FileName), line: s.LeafNodeLocation.LineNumber, want: want, state: s.State, runTime: s.RunTime}
		failure := fmt.Sprintf("%s in %s: %s", s.State, s.Failure.FailureNodeType, firstLines(s.Failure.Message, 6))
		switch {
		case want.pending:
			if s.State != types.SpecStatePending {
				r.unexpected = "expected pending (as upstream marks it), got " + s.State.String()
			}
		case want.skip != "":
			if s.State != types.SpecStateSkipped {
				r.unexpected = "expected skipped, got " + s.State.String()
			}
		case want.differs != nil:
			d := want.differs
			fails := s.State == types.SpecStateFailed && s.Failure.FailureNodeType.String() == d.in && strings.Contains(s.Failure.Message, d.message)
			if !fails && !(d.orPasses && s.State == types.SpecStatePassed) {
				if s.State == types.SpecStatePassed {
					r.unexpected = "a listed difference passed: take it off the list (expectations_test.go, docs/differences.md)"
				} else {
					r.unexpected = fmt.Sprintf("expected to fail in %s with %q, got %s", d.in, d.message, failure)
				}
			}
		default:
			if s.State != types.SpecStatePassed {
				r.unexpected = "expected to pass, got " + failure
			}
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b result) int {
		if c := strings.Compare(a.file, b.file); c != 0 {
			return c
		}
		return a.line - b.line
	})
	return out
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
