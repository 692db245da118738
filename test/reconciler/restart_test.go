package reconciler_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The restart specs stop the adapter shared by every spec.
var _ = Describe("a restarted adapter", Serial, func() {
	It("picks up what it fetched from the App and its Secrets instead of fetching again, and fetches again for a Secret deleted by hand", func(ctx context.Context) {
		const name = "restart-helm"
		tgz, err := harness.TarGz(bdtest.Testdata("..", "..", "examples", "charts", "hello-world"))
		Expect(err).NotTo(HaveOccurred())
		path := "/restart/hello-world.tgz"
		url := env.Files.Put(path, tgz)
		bdtest.HelmBD(ctx, name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}})
		appFor(ctx, name, 1)
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		fetches, written := env.Files.Hits(path), bdtest.MustBD(ctx, name).ResourceVersion

		restartAdapter(ctx)
		// The new adapter reconciles every BundleDeployment as it starts.
		Consistently(func() int { return env.Files.Hits(path) }).WithTimeout(5 * time.Second).Should(Equal(fetches))
		Expect(bdtest.MustBD(ctx, name).ResourceVersion).To(Equal(written))

		secrets := contentSecrets(ctx, name)
		Expect(env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: objectMeta(harness.SystemNamespace, secrets[0])})).To(Succeed())
		Eventually(func() []string { return contentSecrets(ctx, name) }).Should(ConsistOf(secrets))
		Expect(env.Files.Hits(path)).To(Equal(fetches + 1))
	})

	It("renews webhook certificates that are due, including ones it finds stored when it starts", func(ctx context.Context) {
		const name = "renew-certs"
		ref, _, err := env.Registry.PushDir(bdtest.Testdata("registry-v1-corpus", "kube-green", "0.7.1"), "renew/kube-green:v1")
		Expect(err).NotTo(HaveOccurred())
		bdtest.RegistryBD(ctx, name, ref, name)
		first := appFor(ctx, name, 1)
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))

		stopAdapter()
		due := storeCertsExpiringIn(ctx, name+"-webhook-certs", 10*24*time.Hour)
		startAdapter(ctx)
		Eventually(func(g Gomega) {
			secret := &corev1.Secret{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name + "-webhook-certs"}, secret)).To(Succeed())
			g.Expect(secret.Data["ca.crt"]).NotTo(Equal(due), "the CA due in 10 days is replaced")
			app, err := bdtest.GetApp(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(app.Spec.Fetch).NotTo(Equal(first.Spec.Fetch), "the content with the new certificates is handed to the App")
		}).WithContext(ctx).Should(Succeed())
	})
})

// storeCertsExpiringIn replaces every certificate in the Secret with one
// that expires after d, returning the new CA.
func storeCertsExpiringIn(ctx context.Context, secretName string, d time.Duration) []byte {
	secret := &corev1.Secret{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: secretName}, secret)).To(Succeed())
	issued := time.Now().Add(d - certs.Validity)
	ca, err := certs.NewCA("soon due", issued)
	Expect(err).NotTo(HaveOccurred())
	data := map[string][]byte{"ca.crt": ca.CertPEM, "ca.key": ca.KeyPEM}
	for k := range secret.Data {
		prefix, ok := strings.CutSuffix(k, ".crt")
		if !ok || k == "ca.crt" {
			continue
		}
		namespace, service, _ := strings.Cut(prefix, ".")
		serving, err := certs.Issue(ca, service, namespace, issued)
		Expect(err).NotTo(HaveOccurred())
		data[prefix+".crt"], data[prefix+".key"] = serving.CertPEM, serving.KeyPEM
	}
	Expect(len(data)).To(BeNumerically(">", 2), "the bundle has a webhook certificate")
	secret.Data = data
	Expect(env.Client.Update(ctx, secret)).To(Succeed())
	return ca.CertPEM
}
