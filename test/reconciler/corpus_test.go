package reconciler_test

import (
	"archive/tar"
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The bad and hostile inputs that the adapter decides on before
// kapp-controller is involved. Each must end in its condition within
// seconds, with a bounded number of reconciles (no hot loop). The inputs
// that kapp-controller judges are in the end-to-end suite's corpus.
var _ = Describe("the bad and hostile input corpus the adapter judges", func() {
	// Paths are resolved when a spec runs: the harness is not up while the
	// tree is built.
	registryDir := func(parts ...string) func(ctx context.Context, name string) {
		return func(ctx context.Context, name string) {
			ref, _, err := env.Registry.PushDir(bdtest.Testdata(parts...), "corpus/"+name+":v1")
			Expect(err).NotTo(HaveOccurred())
			bdtest.RegistryBD(ctx, name, ref, name)
		}
	}
	hostile := func(entry func(tw *tar.Writer)) func(ctx context.Context, name string) {
		return func(ctx context.Context, name string) {
			bdtest.RegistryBD(ctx, name, bdtest.HostileImage("corpus/"+name+":v1", entry), name)
		}
	}
	helmHTTP := func(values string, parts ...string) func(ctx context.Context, name string) {
		return func(ctx context.Context, name string) {
			tgz, err := harness.TarGz(bdtest.Testdata(parts...))
			Expect(err).NotTo(HaveOccurred())
			url := env.Files.Put("/corpus/"+name+".tgz", tgz)
			bdtest.HelmBD(ctx, name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}}, func(bd *rukpakv1alpha2.BundleDeployment) {
				if values != "" {
					bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(values)}
				}
			})
		}
	}
	plainAnnotated := func(key, value string) func(ctx context.Context, name string) {
		return func(ctx context.Context, name string) {
			bdtest.PlainBD(ctx, name, images["plain-v0/valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
				bd.Annotations = map[string]string{key: value}
			})
		}
	}
	chart := []string{"..", "..", "examples", "charts"}

	DescribeTable("each case ends in its condition within seconds, without a hot loop",
		func(ctx context.Context, condType, reason, msg string, create func(ctx context.Context, name string)) {
			name := "corpus-" + strings.ToLower(strings.ReplaceAll(CurrentSpecReport().LeafNodeText, " ", "-"))
			name = strings.TrimRight(name[:min(len(name), 52)], "-")
			before, start := reconciles(), time.Now()
			create(ctx, name)
			Eventually(bdtest.GetBD(ctx, name)).WithTimeout(15 * time.Second).Should(bdtest.HaveCondition(condType, metav1.ConditionFalse, reason, msg))
			took := time.Since(start)
			// Some more time for a loop to show.
			time.Sleep(2 * time.Second)
			for _, c := range bdtest.MustBD(ctx, name).Status.Conditions {
				Expect(c.Message).NotTo(BeEmpty(), "condition %s has no message", c.Type)
				Expect(c.Message).NotTo(ContainSubstring("<nil>"))
			}
			n := reconciles() - before
			GinkgoWriter.Printf("corpus %-45s %s=False %-14s in %4.1fs, %2.0f reconciles\n", name, condType, reason, took.Seconds(), n)
			// Concurrent specs share the counter; a hot loop makes hundreds.
			Expect(n).To(BeNumerically("<=", 40))
		},
		Entry("auth secret in another namespace", "Unpacked", "UnpackFailed", "kube-system/admin", func(ctx context.Context, name string) {
			bdtest.PlainBD(ctx, name, "", func(bd *rukpakv1alpha2.BundleDeployment) {
				h := &rukpakv1alpha2.HTTPSource{URL: env.UntrustedFiles.URL("/corpus/x.tgz")}
				h.Auth.Secret.Name = "kube-system/admin"
				h.Auth.InsecureSkipVerify = true
				bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: h}
			})
		}),
		Entry("http body not an archive", "Unpacked", "UnpackFailed", "gzip: invalid header", func(ctx context.Context, name string) {
			url := env.Files.Put("/corpus/LICENSE", []byte("Apache License\n"))
			bdtest.HelmBD(ctx, name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}})
		}),
		Entry("http 404 of a chart", "Unpacked", "UnpackFailed", "404", func(ctx context.Context, name string) {
			bdtest.HelmBD(ctx, name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: env.Files.URL("/corpus/no-chart.tgz")}})
		}),
		Entry("tar path traversal", "Unpacked", "UnpackFailed", "escapes the bundle root", hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "../../x", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
			_, _ = tw.Write([]byte("x"))
		})),
		Entry("tar path traversal inside manifests", "Unpacked", "UnpackFailed", `archive entry "manifests/../../x" escapes the bundle root`, hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/../../x", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
			_, _ = tw.Write([]byte("x"))
		})),
		Entry("symlink escape", "Unpacked", "UnpackFailed", `link "manifests/x.yaml" points outside the bundle root`, hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/x.yaml", Linkname: "../../../etc/shadow", Typeflag: tar.TypeSymlink})
		})),
		Entry("absolute symlink", "Unpacked", "UnpackFailed", `points outside the bundle root ("/etc/passwd")`, hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/evil.yaml", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
		})),
		Entry("hard link escape", "Unpacked", "UnpackFailed", `points outside the bundle root ("../../x")`, hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/evil.yaml", Linkname: "../../x", Typeflag: tar.TypeLink})
		})),
		Entry("decompression bomb", "Unpacked", "UnpackFailed", "over the limit", hostile(func(tw *tar.Writer) {
			zeros := make([]byte, 7<<20)
			for i := 0; i < 10; i++ {
				_ = tw.WriteHeader(&tar.Header{Name: "manifests/zeros-" + string(rune('a'+i)), Mode: 0o644, Size: int64(len(zeros)), Typeflag: tar.TypeReg})
				_, _ = tw.Write(zeros)
			}
		})),
		Entry("a 2 GiB sparse file", "Unpacked", "UnpackFailed", "is 2147483648 bytes, over the limit of 8388608", hostile(func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/sparse.yaml", Mode: 0o644, Size: 2 << 30, Typeflag: tar.TypeReg})
		})),
		Entry("not a chart", "Installed", "InstallFailed", "Chart.yaml file is missing", helmHTTP("", "rukpak-bundles", "plain-v0", "provides")),
		Entry("bad config values", "Installed", "InstallFailed", "parse deployment config", helmHTTP(`{"values":"a: [1"}`, chart...)),
		Entry("config entry not a string", "Installed", "InstallFailed", "must be a string", helmHTTP(`{"values":{"replicaCount":1}}`, chart...)),
		Entry("unsupported install mode", "Installed", "InstallFailed", "supported install modes [MultiNamespace]", registryDir("rukpak-bundles", "registry", "invalid")),
		// Its unknown install mode type is ignored, as OLM ignores it; its one real mode needs watchNamespaces.
		Entry("unknown install mode type", "Installed", "InstallFailed", "supported install modes [SingleNamespace] need the namespaces to watch", registryDir("registry-v1-corpus", "percona-server-mongodb-operator", "1.18.0")),
		Entry("v1beta1 crd", "Installed", "InstallFailed", "apiextensions.k8s.io/v1beta1", registryDir("registry-v1-corpus", "hyperfoil-bundle", "0.5.1")),
		// Waiting, not refused: installs once the cluster serves them (see dependencies_test.go).
		Entry("dependencies", "Installed", "DependenciesUnmet", "the cluster does not serve Certificate (cert-manager.io/v1)", registryDir("registry-v1-corpus", "shipwright-operator", "0.15.2")),
		Entry("plain bundle in registry class", "Installed", "InstallFailed", "metadata/annotations.yaml", func(ctx context.Context, name string) {
			bdtest.RegistryBD(ctx, name, images["plain-v0/valid"], name)
		}),
		Entry("bad watch namespaces", "Installed", "InstallFailed", "spec.config.watchNamespaces must be a list", func(ctx context.Context, name string) {
			ref, _, err := env.Registry.PushDir(bdtest.Testdata("rukpak-bundles", "registry", "valid"), "corpus/registry-valid:v1")
			Expect(err).NotTo(HaveOccurred())
			bdtest.RegistryBD(ctx, name, ref, name, func(bd *rukpakv1alpha2.BundleDeployment) {
				bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"watchNamespaces":"everything"}`)}
			})
		}),
		Entry("certificateData without a certificate", "Unpacked", "UnpackFailed", "certificate", func(ctx context.Context, name string) {
			bdtest.PlainBD(ctx, name, tlsImage(), func(bd *rukpakv1alpha2.BundleDeployment) {
				bd.Spec.Source.Image.CertificateData = "-----BEGIN CERTIFICATE-----\nMIIBhTCCASugAwIBAgIQIRi6zePL6mKjOipn+dNuaTAKBggqhkjOPQQDAjASMRAw\n-----END CERTIFICATE-----\n"
			})
		}),
		Entry("a registry the given CA does not sign for", "Unpacked", "UnpackFailed", "certificate signed by unknown authority", func(ctx context.Context, name string) {
			other, err := harness.NewTestCA("a CA nobody uses")
			Expect(err).NotTo(HaveOccurred())
			bdtest.PlainBD(ctx, name, tlsImage(), func(bd *rukpakv1alpha2.BundleDeployment) {
				bd.Spec.Source.Image.CertificateData = string(other.PEM)
			})
		}),
		Entry("bad install service account", "Unpacked", "UnpackFailed", "is not a ServiceAccount name", plainAnnotated(rukpakv1alpha2.AnnotationServiceAccount, "Not_A_Name")),
		Entry("bad sync period", "Unpacked", "UnpackFailed", "is not a positive duration", plainAnnotated(rukpakv1alpha2.AnnotationSyncPeriod, "often")),
	)

	It("never touches a BundleDeployment of another class", func(ctx context.Context) {
		bdtest.PlainBD(ctx, "corpus-other-class", images["plain-v0/valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.ProvisionerClassName = "example-com-other"
		})
		Consistently(bdtest.GetBD(ctx, "corpus-other-class")).WithTimeout(3 * time.Second).Should(And(
			HaveField("Status.Conditions", BeEmpty()), HaveField("Finalizers", BeEmpty())))
		_, err := bdtest.GetApp(ctx, "corpus-other-class")
		Expect(err).To(MatchError(ContainSubstring("not found")))
	})
})

// tlsImage is rukpak's plain-v0/valid on the registry that serves TLS with
// a certificate of its own test CA.
func tlsImage() string {
	ref, _, err := env.TLSRegistry.PushDir(bdtest.Testdata("rukpak-bundles", "plain-v0", "valid"), "corpus/tls:v1")
	Expect(err).NotTo(HaveOccurred())
	return ref
}
