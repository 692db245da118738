package e2e_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var _ = Describe("plain bundles over HTTP", func() {
	var tgz []byte
	BeforeEach(func() {
		var err error
		tgz, err = harness.TarGz(helloBundle())
		Expect(err).NotTo(HaveOccurred())
	})

	It("installs a .tgz and reports the source as resolved", func(ctx context.Context) {
		url := env.Files.Put("/bundles/valid.tgz", tgz)
		httpBD(ctx, "http-valid", url, "")
		Eventually(getBD(ctx, "http-valid")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.HTTP.URL", Equal(url)),
		))
		Expect(ownedCRDs(ctx, "http-valid")()).To(ConsistOf("greetings.example.rukpak-kapp.dev"))
	})

	It("says so when the file is not an archive", func(ctx context.Context) {
		// vendir keeps a download that is not an archive as a plain file, so
		// the failure is that the bundle has no manifests/ directory.
		url := env.Files.Put("/LICENSE.tgz", []byte("Apache License\nVersion 2.0, January 2004\n"))
		httpBD(ctx, "http-not-archive", url, "")
		Eventually(getBD(ctx, "http-not-archive")).Should(haveCondition("Installed", "False", "InstallFailed", "the bundle has no manifests/ directory"))
	})

	It("uses basic auth from a Secret in the system namespace, and fails clearly without it", func(ctx context.Context) {
		url := env.PrivateFiles.Put("/bundles/private.tgz", tgz)
		basicAuthSecret(ctx, "http-basic-auth", env.PrivateFiles.Username, env.PrivateFiles.Password)

		httpBD(ctx, "http-noauth", url, "")
		Eventually(getBD(ctx, "http-noauth")).Should(haveCondition("Unpacked", "False", "UnpackFailed", "401"))
		deleteAndWait(ctx, "http-noauth")

		httpBD(ctx, "http-auth", url, "http-basic-auth")
		Eventually(getBD(ctx, "http-auth")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})
