package e2e_test

import (
	"archive/tar"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// corpusRow is one bad or hostile input and the condition it must end in.
type corpusRow struct {
	condType, status, reason  string
	msg                       string
	within                    time.Duration
	maxReconciles, maxRetries float64
}

func plainFiles(tag string, files map[string]string) func(ctx context.Context, name string) {
	return func(ctx context.Context, name string) { plainBD(ctx, name, dirBundle(tag, files)) }
}

func helmHTTP(dir string, values string) func(ctx context.Context, name string) {
	return func(ctx context.Context, name string) {
		tgz, err := harness.TarGz(dir)
		Expect(err).NotTo(HaveOccurred())
		url := env.Files.Put("/corpus/"+name+".tgz", tgz)
		helmBD(ctx, name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}}, func(bd *rukpakv1alpha2.BundleDeployment) {
			if values != "" {
				bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(values)}
			}
		})
	}
}

func registryDir(dir string) func(ctx context.Context, name string) {
	return func(ctx context.Context, name string) {
		ref, _, err := env.Registry.PushDir(dir, "corpus/"+filepath.Base(dir)+":v1")
		Expect(err).NotTo(HaveOccurred())
		registryBD(ctx, name, ref, name)
	}
}

func hostile(entry func(tw *tar.Writer)) func(ctx context.Context, name string) {
	return func(ctx context.Context, name string) {
		registryBD(ctx, name, hostileImage("corpus/"+name+":v1", entry), name)
	}
}

// billionLaughs is a YAML file of nine lists, each holding nine aliases of
// the one before: levels deep, it expands to 9^levels strings.
func billionLaughs(levels int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < levels; i++ {
		alias := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.Repeat(alias+", ", 8)+alias)
	}
	return b.String()
}

func fails(condType, reason, msg string, within time.Duration) corpusRow {
	return corpusRow{condType: condType, status: "False", reason: reason, msg: msg, within: within, maxReconciles: 30, maxRetries: 4}
}

var _ = Describe("the bad and hostile input corpus", func() {
	bigConfigMap := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: too-big\ndata:\n  blob: " + strings.Repeat("x", 1600*1024) + "\n"

	DescribeTable("each case ends in its condition, in time, without a hot loop",
		func(ctx context.Context, row corpusRow, create func(ctx context.Context, name string)) {
			name := "corpus-" + strings.ToLower(strings.ReplaceAll(CurrentSpecReport().LeafNodeText, " ", "-"))
			if len(name) > 52 {
				name = name[:52]
			}
			name = strings.TrimRight(name, "-")
			reconciles := map[string]string{"controller": "bundledeployment"}
			before := scrape(ctx, "controller_runtime_reconcile_total", reconciles)
			start := time.Now()
			create(ctx, name)
			Eventually(getBD(ctx, name)).WithTimeout(row.within).Should(haveCondition(row.condType, metav1.ConditionStatus(row.status), row.reason, row.msg))
			took := time.Since(start)
			bd := mustBD(ctx, name)
			for _, c := range bd.Status.Conditions {
				Expect(c.Message).NotTo(BeEmpty(), "condition %s has no message", c.Type)
				Expect(c.Message).NotTo(ContainSubstring("<nil>"))
			}
			adapterReconciles := scrape(ctx, "controller_runtime_reconcile_total", reconciles) - before
			var retries int
			if app, err := getApp(ctx, name); err == nil {
				retries = app.Status.ConsecutiveReconcileFailures
			}
			GinkgoWriter.Printf("corpus %-45s %s=%s %-22s in %5.1fs, %3.0f adapter reconciles, %d kapp-controller retries\n",
				name, row.condType, row.status, row.reason, took.Seconds(), adapterReconciles, retries)
			Expect(adapterReconciles).To(BeNumerically("<=", row.maxReconciles))
			Expect(float64(retries)).To(BeNumerically("<=", row.maxRetries))
		},
		// Plain bundles fetched by kapp-controller.
		Entry("missing manifests dir", fails("Installed", "InstallFailed", "readdir manifests: file does not exist: the bundle has no manifests/ directory", time.Minute), plainOf("plain-v0/empty")),
		// ytt reads a file named manifests like the directory's single file, so the cause shown is
		// what is wrong with its content, not rukpak's "unpack unsuccessful <nil>".
		Entry("manifests is a file", fails("Installed", "InstallFailed", "Expected 'metadata.name' on resource 'configmap", time.Minute), plainFiles("manifests-file", map[string]string{"manifests": "kind: ConfigMap\n"})),
		Entry("empty manifests dir", fails("Installed", "InstallFailed", "found zero objects: plain+v0 bundles are required to contain at least one object", time.Minute), plainOf("plain-v0/no-manifests")),
		Entry("non-yaml file", fails("Installed", "InstallFailed", "yaml", time.Minute), plainFiles("non-yaml", map[string]string{"manifests/a.yaml": "kind: ConfigMap\nmetadata: [unclosed\n"})),
		// A YAML bomb (ytt expands aliases without a limit) is the template deadline suite's:
		// templatedeadline_test.go, with this table's bounds.
		Entry("object over the size limit", fails("Installed", "InstallFailed", "too-big", 2*time.Minute), plainFiles("too-big", map[string]string{"manifests/big.yaml": bigConfigMap})),
		Entry("custom resource without crd", fails("Installed", "ErrorGettingReleaseState", "ensure CRDs are installed first", time.Minute), plainOf("plain-v0/invalid-missing-crds")),
		Entry("unknown kind", fails("Installed", "ErrorGettingReleaseState", "ensure CRDs are installed first", time.Minute), plainFiles("unknown-kind", map[string]string{"manifests/w.yaml": "apiVersion: v1\nkind: Wibble\nmetadata:\n  name: w\n"})),
		Entry("missing tag", fails("Unpacked", "UnpackFailed", "no-such-tag", time.Minute), plainRef(func() string { return images["plain-v0/valid"] + "-no-such-tag" })),
		Entry("wrong digest", fails("Unpacked", "UnpackFailed", "sha256:0000", time.Minute), plainRef(func() string {
			return strings.Split(images["plain-v0/valid"], ":v")[0] + "@sha256:" + strings.Repeat("0", 64)
		})),
		Entry("registry auth failure", fails("Unpacked", "UnpackFailed", "UNAUTHORIZED", time.Minute), plainRef(func() string { return privateValid })),
		Entry("registry tls failure", fails("Unpacked", "UnpackFailed", "certificate", time.Minute), plainRef(func() string { return tlsImages["valid"] })),
		Entry("unreachable registry", fails("Unpacked", "UnpackFailed", "connection refused", time.Minute), plainRef(func() string { return "127.0.0.1:1/bundles/none:v1" })),
		Entry("http 404", fails("Unpacked", "UnpackFailed", "404", time.Minute), func(ctx context.Context, name string) {
			httpBD(ctx, name, env.Files.URL("/corpus/missing.tgz"), "")
		}),
		Entry("missing configmap", fails("Unpacked", "UnpackFailed", "corpus-absent", time.Minute), func(ctx context.Context, name string) {
			configMapsBD(ctx, name, "corpus-absent")
		}),
		Entry("git commit not in repository", fails("Unpacked", "UnpackFailed", "", time.Minute), func(ctx context.Context, name string) {
			repo, err := env.Git.NewRepo("corpus-"+randSuffix(), filepath.Join("testdata", "namespaced", "manifests"), "manifests")
			Expect(err).NotTo(HaveOccurred())
			gitBD(ctx, name, rukpakv1alpha2.GitSource{Repository: repo.URL, Ref: rukpakv1alpha2.GitRef{Commit: strings.Repeat("a", 40)}})
		}),
		// Helm bundles (the adapter-side failures are in test/reconciler).
		Entry("chart template error", fails("Installed", "InstallFailed", "", 2*time.Minute), helmHTTP(chartsDir, `{"values":"replicaCount: not-a-number\n"}`)),
	)

	It("installs a BundleDeployment whose name is at the 52-character limit", func(ctx context.Context) {
		name := strings.Repeat("n", 52)
		plainBD(ctx, name, images["hello"])
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})

func plainOf(bundle string) func(ctx context.Context, name string) {
	return func(ctx context.Context, name string) { plainBD(ctx, name, images[bundle]) }
}

func plainRef(ref func() string) func(ctx context.Context, name string) {
	return func(ctx context.Context, name string) { plainBD(ctx, name, ref()) }
}

func plainAnnotated(key, value string) func(ctx context.Context, name string) {
	return func(ctx context.Context, name string) {
		plainBD(ctx, name, images["plain-v0/valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Annotations = map[string]string{key: value}
		})
	}
}
