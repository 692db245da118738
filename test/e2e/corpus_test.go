package e2e_test

import (
	"archive/tar"
	"context"
	"fmt"
	"os"
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

// dirBundle writes files into a fresh directory and pushes it as an image.
func dirBundle(tag string, files map[string]string) string {
	dir := GinkgoT().TempDir()
	for p, data := range files {
		full := filepath.Join(dir, p)
		Expect(os.MkdirAll(filepath.Dir(full), 0o755)).To(Succeed())
		Expect(os.WriteFile(full, []byte(data), 0o644)).To(Succeed())
	}
	ref, _, err := env.Registry.PushDir(dir, "corpus/"+tag+":v1")
	Expect(err).NotTo(HaveOccurred())
	return ref
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
		registryBD(ctx, name, hostileImage(ctx, "corpus/"+name+":v1", entry), name)
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
	corpus := filepath.Join("..", "testdata", "registry-v1-corpus")
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
		Entry("missing manifests dir", fails("Installed", "InstallFailed", "the bundle has no manifests/ directory", time.Minute), plainOf("plain-v0/empty")),
		// ytt reads a file named manifests like the directory's single file, so the cause shown is
		// what is wrong with its content, not rukpak's "unpack unsuccessful <nil>".
		Entry("manifests is a file", fails("Installed", "InstallFailed", "Expected 'metadata.name' on resource 'configmap", time.Minute), plainFiles("manifests-file", map[string]string{"manifests": "kind: ConfigMap\n"})),
		Entry("empty manifests dir", fails("Installed", "InstallFailed", "found zero objects", time.Minute), plainOf("plain-v0/no-manifests")),
		Entry("non-yaml file", fails("Installed", "InstallFailed", "yaml", time.Minute), plainFiles("non-yaml", map[string]string{"manifests/a.yaml": "kind: ConfigMap\nmetadata: [unclosed\n"})),
		// ytt expands aliases without a limit and kapp-controller never stops its template step:
		// the adapter's deadline, or the sidecar's memory cap, whichever comes first, names the cause.
		Entry("yaml bomb", fails("Installed", "InstallFailed", "billion laughs", 2*time.Minute), plainFiles("yaml-bomb", map[string]string{"manifests/bomb.yaml": billionLaughs(9)})),
		Entry("object over the size limit", fails("Installed", "InstallFailed", "too-big", 2*time.Minute), plainFiles("too-big", map[string]string{"manifests/big.yaml": bigConfigMap})),
		Entry("custom resource without crd", fails("Installed", "InstallFailed", "ensure CRDs are installed first", time.Minute), plainOf("plain-v0/invalid-missing-crds")),
		Entry("unknown kind", fails("Installed", "InstallFailed", "ensure CRDs are installed first", time.Minute), plainFiles("unknown-kind", map[string]string{"manifests/w.yaml": "apiVersion: v1\nkind: Wibble\nmetadata:\n  name: w\n"})),
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
		// Sources the adapter fetches itself.
		Entry("auth secret in another namespace", fails("Unpacked", "UnpackFailed", "kube-system/admin", time.Minute), func(ctx context.Context, name string) {
			plainBD(ctx, name, "", func(bd *rukpakv1alpha2.BundleDeployment) {
				h := &rukpakv1alpha2.HTTPSource{URL: env.UntrustedFiles.URL("/corpus/x.tgz")}
				h.Auth.Secret.Name = "kube-system/admin"
				h.Auth.InsecureSkipVerify = true
				bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: h}
			})
		}),
		Entry("http body not an archive", fails("Unpacked", "UnpackFailed", "gzip: invalid header", time.Minute), func(ctx context.Context, name string) {
			url := env.Files.Put("/corpus/LICENSE", []byte("Apache License\n"))
			helmBD(ctx, name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}})
		}),
		Entry("tar path traversal", fails("Unpacked", "UnpackFailed", "escapes the bundle root", time.Minute), hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "../../x", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
			_, _ = tw.Write([]byte("x"))
		})),
		Entry("symlink escape", fails("Unpacked", "UnpackFailed", "points outside the bundle root", time.Minute), hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/x.yaml", Linkname: "../../../etc/shadow", Typeflag: tar.TypeSymlink})
		})),
		Entry("hard link escape", fails("Unpacked", "UnpackFailed", "points outside the bundle root", time.Minute), hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/x.yaml", Linkname: "/etc/shadow", Typeflag: tar.TypeLink})
		})),
		Entry("decompression bomb", fails("Unpacked", "UnpackFailed", "over the limit", time.Minute), hostile(func(tw *tar.Writer) {
			zeros := make([]byte, 7<<20)
			for i := 0; i < 10; i++ {
				_ = tw.WriteHeader(&tar.Header{Name: "manifests/zeros-" + string(rune('a'+i)), Mode: 0o644, Size: int64(len(zeros)), Typeflag: tar.TypeReg})
				_, _ = tw.Write(zeros)
			}
		})),
		// Helm bundles.
		Entry("not a chart", fails("Installed", "InstallFailed", "Chart.yaml file is missing", time.Minute), helmHTTP(filepath.Join("testdata", "namespaced"), "")),
		Entry("bad config values", fails("Installed", "InstallFailed", "parse deployment config", time.Minute), helmHTTP(chartsDir, `{"values":"a: [1"}`)),
		Entry("config entry not a string", fails("Installed", "InstallFailed", "must be a string", time.Minute), helmHTTP(chartsDir, `{"values":{"replicaCount":1}}`)),
		Entry("chart template error", fails("Installed", "InstallFailed", "", 2*time.Minute), helmHTTP(chartsDir, `{"values":"replicaCount: not-a-number\n"}`)),
		// registry+v1 bundles.
		Entry("unsupported install mode", fails("Installed", "InstallFailed", "supported install modes [MultiNamespace]", time.Minute), func(ctx context.Context, name string) {
			registryDir(filepath.Join(bundlesDir, "registry", "invalid"))(ctx, name)
		}),
		Entry("unknown install mode type", fails("Installed", "InstallFailed", `install mode type "OwnNamespacejl"`, time.Minute), registryDir(filepath.Join(corpus, "percona-server-mongodb-operator", "1.18.0"))),
		Entry("v1beta1 crd", fails("Installed", "InstallFailed", "apiextensions.k8s.io/v1beta1", time.Minute), registryDir(filepath.Join(corpus, "hyperfoil-bundle", "0.5.1"))),
		Entry("dependencies", fails("Installed", "InstallFailed", "dependencies are not supported", time.Minute), registryDir(filepath.Join(corpus, "shipwright-operator", "0.15.2"))),
		Entry("plain bundle in registry class", fails("Installed", "InstallFailed", "metadata/annotations.yaml", time.Minute), func(ctx context.Context, name string) {
			registryBD(ctx, name, images["plain-v0/valid"], name)
		}),
		// Specs the API accepts but the adapter cannot honour.
		Entry("bad install service account", fails("Unpacked", "UnpackFailed", "is not a ServiceAccount name", 30*time.Second), plainAnnotated(rukpakv1alpha2.AnnotationServiceAccount, "Not_A_Name")),
		Entry("bad sync period", fails("Unpacked", "UnpackFailed", "is not a positive duration", 30*time.Second), plainAnnotated(rukpakv1alpha2.AnnotationSyncPeriod, "often")),
		Entry("bad watch namespaces", fails("Installed", "InstallFailed", "spec.config.watchNamespaces must be a list", time.Minute), func(ctx context.Context, name string) {
			ref, _, err := env.Registry.PushDir(filepath.Join(bundlesDir, "registry", "valid"), "corpus/registry-valid:v1")
			Expect(err).NotTo(HaveOccurred())
			registryBD(ctx, name, ref, name, func(bd *rukpakv1alpha2.BundleDeployment) {
				bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"watchNamespaces":"everything"}`)}
			})
		}),
	)

	It("installs a BundleDeployment whose name is at the 52-character limit", func(ctx context.Context) {
		name := strings.Repeat("n", 52)
		plainBD(ctx, name, images["plain-v0/valid"])
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("never touches a BundleDeployment of another class", func(ctx context.Context) {
		plainBD(ctx, "corpus-other-class", images["plain-v0/valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.ProvisionerClassName = "example-com-other"
		})
		Consistently(getBD(ctx, "corpus-other-class")).WithTimeout(5 * time.Second).Should(HaveField("Status.Conditions", BeEmpty()))
		_, err := getApp(ctx, "corpus-other-class")
		Expect(err).To(MatchError(ContainSubstring("not found")))
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
