package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// kapp-controller-config names a company's CAs and proxy once, for
// kapp-controller; the adapter's own fetches follow it too. The sources
// here are reached by names only a real proxy reaches
// (harness.ProxiedDomain), over TLS from CAs that only the config names.
var _ = Describe("kapp-controller-config's CAs and proxies", Ordered, func() {
	var (
		proxy                            *harness.Proxy
		companyCA                        *harness.TestCA
		gitURL, archiveURL, registryRef  string
		gitHost, filesHost, registryHost string
	)
	BeforeAll(func(ctx context.Context) {
		var err error
		proxy, err = harness.StartProxy()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(proxy.Stop)
		companyCA, err = harness.NewTestCA("a company's CA")
		Expect(err).NotTo(HaveOccurred())
		files, err := harness.StartFileServer("", "", companyCA)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(files.Stop)
		tgz, err := harness.TarGz(helloBundle())
		Expect(err).NotTo(HaveOccurred())
		files.Put("/hello.tgz", tgz)
		filesHost = harness.ProxiedHost("files", files.Host)
		archiveURL = "https://" + filesHost + "/hello.tgz"

		repo, err := env.PrivateGit.NewRepo("kcconfig-"+randSuffix(), helloBundle(), "hello")
		Expect(err).NotTo(HaveOccurred())
		gitHost = harness.ProxiedHost("git", env.PrivateGit.Host)
		gitURL = strings.Replace(repo.URL, env.PrivateGit.Host, gitHost, 1)
		basicAuthSecret(ctx, "kcconfig-git-auth", env.PrivateGit.Username, env.PrivateGit.Password)

		_, _, err = env.TLSRegistry.PushDir(filepath.Join(bundlesDir, "registry", "valid"), "bundles/kcconfig-registry-valid:v1")
		Expect(err).NotTo(HaveOccurred())
		registryHost = harness.ProxiedHost("registry", env.TLSRegistry.Host)
		registryRef = registryHost + "/bundles/kcconfig-registry-valid:v1"
	})

	config := func(ctx context.Context) {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: harness.KappControllerNamespace, Name: "kapp-controller-config"},
			StringData: map[string]string{
				// The git server's CA is what the harness has kapp-controller's
				// git trust already (its caCerts cannot reach the host's trust
				// store here); the others only this config names.
				"caCerts":    string(env.ClusterCA.PEM) + "\n" + string(companyCA.PEM) + "\n" + string(env.TLSRegistry.CA.PEM),
				"httpProxy":  proxy.URL,
				"httpsProxy": proxy.URL,
				// Every other server of the suite is on loopback.
				"noProxy": "127.0.0.1,localhost",
			},
		}
		Expect(env.Client.Create(ctx, secret)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, secret))).To(Succeed()) })
	}
	gitBundle := func() rukpakv1alpha1.BundleSource {
		src := gitSource(gitURL, "./hello", rukpakv1alpha1.GitRef{Branch: "main"})
		src.Git.Auth.Secret.Name = "kcconfig-git-auth"
		return src
	}

	It("fails a Bundle on its own whose source only the proxy reaches, naming the host, until the config names the proxy and CA; then unpacks it without a restart", func(ctx context.Context) {
		bdtest.StandaloneBundle(ctx, "kcconfig-git", rukpakv1alpha1.ClassPlain, gitBundle())
		Eventually(bdtest.GetBundle(ctx, "kcconfig-git")).Should(bundleCondition(rukpakv1alpha1.TypeUnpacked, metav1.ConditionFalse, "lookup git."+harness.ProxiedDomain))

		config(ctx)
		Eventually(bdtest.GetBundle(ctx, "kcconfig-git")).Should(bundleCondition(rukpakv1alpha1.TypeUnpacked, metav1.ConditionTrue, ""))
		Expect(proxy.Carried(gitHost)).To(BeNumerically(">", 0))

		By("http over https from the company's CA, through the proxy")
		bdtest.StandaloneBundle(ctx, "kcconfig-http", rukpakv1alpha1.ClassPlain, httpSource(archiveURL))
		Eventually(bdtest.GetBundle(ctx, "kcconfig-http")).Should(bundleCondition(rukpakv1alpha1.TypeUnpacked, metav1.ConditionTrue, ""))
		Expect(proxy.Carried(filesHost)).To(BeNumerically(">", 0))
	})

	It("installs a registry+v1 bundle from a registry only the config's CA and proxy reach", func(ctx context.Context) {
		config(ctx)
		registryBD(ctx, "kcconfig-registry", registryRef, "kcconfig-prometheus")
		Eventually(getBD(ctx, "kcconfig-registry")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Image.Ref", HavePrefix(registryHost+"/bundles/kcconfig-registry-valid@sha256:")),
		))
		Expect(proxy.Carried(registryHost)).To(BeNumerically(">", 0))
	})

	It("installs through kapp-controller the same git source a Bundle on its own unpacks: both follow the config", func(ctx context.Context) {
		before := sidecarProxiesSet()
		config(ctx)
		// kapp-controller applies its config to its sidecar's environment
		// when it sees the Secret; an App fetched before would fail and
		// wait out kapp-controller's retry.
		Eventually(sidecarProxiesSet).Should(BeNumerically(">", before))
		src := gitBundle()
		gitBD(ctx, "kcconfig-plain-git", rukpakv1alpha2.GitSource{
			Repository: src.Git.Repository, Directory: src.Git.Directory, Ref: rukpakv1alpha2.GitRef{Branch: "main"},
			Auth: rukpakv1alpha2.Authorization{Secret: rukpakv1alpha2.LocalObjectReference{Name: "kcconfig-git-auth"}},
		})
		// kapp-controller fetches this one itself, through the proxy its
		// config gave its sidecar's git.
		Eventually(getBD(ctx, "kcconfig-plain-git")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		app, err := getApp(ctx, "kcconfig-plain-git")
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Spec.Fetch[0].Git).NotTo(BeNil(), "kapp-controller fetched the repository itself")
		bdtest.StandaloneBundle(ctx, "kcconfig-git-again", rukpakv1alpha1.ClassPlain, src)
		Eventually(bdtest.GetBundle(ctx, "kcconfig-git-again")).Should(bundleCondition(rukpakv1alpha1.TypeUnpacked, metav1.ConditionTrue, ""))
	})
})

// sidecarProxiesSet counts the times kapp-controller's sidecar set
// https_proxy from kapp-controller-config, as its log says.
func sidecarProxiesSet() int {
	data, err := os.ReadFile(filepath.Join(env.LogDir(), "kapp-controller-sidecarexec.log"))
	Expect(err).NotTo(HaveOccurred())
	return strings.Count(string(data), "Setting https_proxy")
}

// bundleCondition matches a Bundle whose condition t has status and a
// message holding msg.
func bundleCondition(t string, status metav1.ConditionStatus, msg string) types.GomegaMatcher {
	return WithTransform(func(b rukpakv1alpha1.Bundle) string {
		c := meta.FindStatusCondition(b.Status.Conditions, t)
		if c == nil {
			return "no " + t
		}
		return string(c.Status) + ": " + c.Message
	}, And(HavePrefix(string(status)+": "), ContainSubstring(msg)))
}
