package olm_test

import (
	"bufio"
	"bytes"
	"context"
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
	. "github.com/onsi/gomega"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// operatorControllerVersion is the operator-controller whose suite runs:
// the one test/tools/operator-controller pins.
const operatorControllerVersion = "v0.9.0"

// expectation is what a spec of operator-controller's suite does against
// rukpak-kapp, and what it did against rukpak v0.16.0 on this control
// plane (the baseline, measured with OLM_BASELINE=rukpak-v0.16.0).
type expectation struct {
	// pass: the spec passes against rukpak-kapp. Otherwise it is a listed
	// difference: it must fail, with differs in its output.
	pass    bool
	differs string
	// baseline is the spec's outcome against rukpak v0.16.0, "passed" or
	// "failed"; a failure's output shows baselineShows, and baselineWhy
	// says why.
	baseline      string
	baselineShows string
	baselineWhy   string
	why           string
}

// upstream lists every test of operator-controller v0.9.0's test/e2e.
var upstream = map[string]expectation{
	"TestClusterExtensionInstallRegistry":                 {pass: true, baseline: "failed", baselineShows: `actual  : "UnpackPending"`, baselineWhy: unpackPods},
	"TestClusterExtensionInstallPlain":                    {pass: true, baseline: "failed", baselineShows: `actual  : "UnpackPending"`, baselineWhy: unpackPods},
	"TestClusterExtensionInstallReResolvesWhenNewCatalog": {pass: true, baseline: "passed"},
	"TestClusterExtensionInstallNonSuccessorVersion":      {pass: true, baseline: "passed"},
	"TestClusterExtensionInstallSuccessorVersion":         {pass: true, baseline: "passed"},
}

// unpackPods is why rukpak v0.16.0 installs nothing on this control plane.
const unpackPods = "the BundleDeployment's HasValidBundle stays UnpackPending: rukpak v0.16.0 unpacks an image in a Pod " +
	"and reads the content from its log, and the fake nodes run no container"

// outcome is one test's result as `go test -v` prints it.
type outcome struct {
	name, result string
	took         time.Duration
	// output is what the test printed.
	output string
}

var testLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(([0-9.]+)s\)`)

// runUpstream runs operator-controller's suite binary (built by
// test/tools) from its package's directory, as `go test` runs it, with the
// admin kubeconfig and the harness's test catalog.
func runUpstream(ctx context.Context) ([]outcome, time.Duration, error) {
	bin := filepath.Join(env.Root, "bin", "operator-controller-e2e.test")
	cmd := exec.CommandContext(ctx, bin, "-test.v", "-test.timeout", "25m")
	cmd.Dir = filepath.Join(env.OLM.ModuleDir, "test", "e2e")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.ControlPlane.Kubeconfig, "CATALOG_IMG="+env.OLM.CatalogImage)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	GinkgoWriter.Printf("operator-controller %s's suite:\n%s\n", operatorControllerVersion, out.String())
	// Failing tests make the binary exit non-zero; what matters is each
	// test's result.
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		return nil, took, fmt.Errorf("run %s: %w", bin, err)
	}
	return parseTests(out.String()), took, nil
}

// parseTests reads `go test -v` output: each top-level test's result, and
// the lines printed between its RUN and its result.
func parseTests(out string) []outcome {
	var results []outcome
	var current strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "=== RUN") {
			current.Reset()
			continue
		}
		if m := testLine.FindStringSubmatch(line); m != nil && !strings.Contains(m[2], "/") {
			d, _ := time.ParseDuration(m[3] + "s")
			results = append(results, outcome{name: m[2], result: map[string]string{"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}[m[1]], took: d, output: current.String()})
			current.Reset()
			continue
		}
		current.WriteString(line + "\n")
	}
	return results
}

var _ = Describe("operator-controller "+operatorControllerVersion+"'s end-to-end suite", Ordered, func() {
	It("runs unchanged: every test passes against rukpak-kapp, or fails as a listed difference (or, in the baseline, as rukpak v0.16.0 did)", func(ctx context.Context) {
		results, took, err := runUpstream(ctx)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, r := range results {
			names = append(names, r.name)
		}
		Expect(names).To(ConsistOf(slices.Collect(maps.Keys(upstream))), "upstream names each test of the suite, and only those")
		for _, r := range results {
			want := upstream[r.name]
			switch {
			case baseline && want.baseline == "passed":
				Expect(r.result).To(Equal("passed"), "%s against rukpak v0.16.0:\n%s", r.name, r.output)
			case baseline:
				Expect(r.result).To(Equal(want.baseline), "%s against rukpak v0.16.0:\n%s", r.name, r.output)
				Expect(r.output).To(ContainSubstring(want.baselineShows), "%s against rukpak v0.16.0 fails otherwise than recorded", r.name)
			case want.pass:
				Expect(r.result).To(Equal("passed"), "%s:\n%s", r.name, r.output)
			default:
				Expect(r.result).To(Equal("failed"), "%s passes now: take it off the differences\n%s", r.name, r.output)
				Expect(r.output).To(ContainSubstring(want.differs), r.name)
			}
		}
		if path := os.Getenv("OLM_CONFORMANCE_REPORT"); path != "" && !baseline {
			Expect(os.WriteFile(path, []byte(reportMarkdown(results, took, harness.MeasuredOn(ctx))), 0o644)).To(Succeed())
		}
	}, NodeTimeout(28*time.Minute))
})

// reportMarkdown is docs/conformance-olm.md.
func reportMarkdown(results []outcome, took time.Duration, measured string) string {
	var b strings.Builder
	passed := 0
	for _, r := range results {
		if r.result == "passed" {
			passed++
		}
	}
	fmt.Fprintf(&b, `# Conformance: operator-controller %[1]s's end-to-end suite against rukpak-kapp

Generated by `+"`make conformance-olm`"+` (`+"`test/olm`"+`); do not edit. operator-controller %[1]s, OLM v1's
controller as it last wrote rukpak's v1alpha1 BundleDeployments, and catalogd v0.10.0, built from their
modules by `+"`test/tools`"+`, ran out of cluster with the ServiceAccounts, RBAC and CRDs of their own
`+"`config/default`"+` on the harness's local control plane, with rukpak-kapp and kapp-controller in place of
rukpak; then operator-controller's own end-to-end suite (package `+"`test/e2e`"+` of its module, built
unchanged as a test binary) ran against them, in %[2]s (%[5]s): %[3]d of %[4]d tests passed.

The harness serves what the suite expects of its cluster: its test catalog
(`+"`testdata/catalogs/test-catalog`"+`, a file-based catalog) as the image `+"`CATALOG_IMG`"+` names, and the
bundle images the catalog names (`+"`localhost/testdata/bundles/...`"+`, with no port: HTTPS on
`+"`localhost:443`"+`), each laid out as its Dockerfile in operator-controller's `+"`testdata`"+` says. The bundle
registry listens on a loopback address of its own; the adapter and kapp-controller, which fetch the
bundles, each run in a mount namespace in which a hosts file of the harness names that address
`+"`localhost`"+` and trust its CA (`+"`test/harness/olm.go`"+`, `+"`fetchview.go`"+`).

The baseline is the same suite against rukpak v0.16.0 itself (the rukpak operator-controller %[1]s was
released against) on the same control plane, measured with `+"`make conformance-olm-baseline`"+`, which
fails if a test's outcome there changes.

| test | rukpak-kapp | rukpak v0.16.0 (baseline) |
| --- | --- | --- |
`, operatorControllerVersion, took.Round(time.Second), passed, len(results), measured)
	for _, r := range results {
		want := upstream[r.name]
		got := fmt.Sprintf("%s (%s)", r.result, (time.Duration(r.took.Seconds()) * time.Second).String())
		if !want.pass {
			got += ": " + want.why
		}
		base := want.baseline
		if want.baselineWhy != "" {
			base += ": " + want.baselineWhy
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.name, got, base)
	}
	return b.String()
}
