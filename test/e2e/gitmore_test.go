package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// sshAuthSecret creates a Secret in rukpak's ssh layout, deleted when the
// spec ends. knownHosts may be empty.
func sshAuthSecret(ctx context.Context, name string, key, knownHosts []byte) {
	data := map[string][]byte{"ssh-privatekey": key}
	if len(knownHosts) > 0 {
		data["ssh-knownhosts"] = knownHosts
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.SystemNamespace},
		Type:       corev1.SecretTypeSSHAuth,
		Data:       data,
	}
	ExpectWithOffset(1, env.Client.Create(ctx, secret)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, secret) })
}

var _ = Describe("plain bundles from git over ssh and untrusted TLS", func() {
	It("clones over ssh with the key and known_hosts from the Secret (kapp-controller's fetch)", func(ctx context.Context) {
		name := "ssh-" + randSuffix()
		repo, err := env.Git.NewRepo(name, filepath.Join("testdata", "namespaced", "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		commit, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		sshAuthSecret(ctx, "git-ssh", env.SSHGit.ClientKey, env.SSHGit.KnownHosts)

		g := rukpakv1alpha2.GitSource{Repository: env.SSHGit.URL(name), Ref: rukpakv1alpha2.GitRef{Branch: "main"}}
		g.Auth.Secret.Name = "git-ssh"
		gitBD(ctx, "git-ssh", g)
		Eventually(getBD(ctx, "git-ssh")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Git.Ref", Equal(rukpakv1alpha2.GitRef{Commit: commit})),
		))
		app, err := getApp(ctx, "git-ssh")
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Spec.Fetch[0].Git).NotTo(BeNil(), "kapp-controller fetches ssh repositories with known hosts itself")
	})

	It("refuses an ssh host whose key is not in known_hosts", func(ctx context.Context) {
		name := "ssh-bad-" + randSuffix()
		_, err := env.Git.NewRepo(name, filepath.Join("testdata", "namespaced", "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		other, err := harness.StartSSHGitServer(env.Git)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(other.Stop)
		// The right key for the user, but the host key of another server.
		sshAuthSecret(ctx, "git-ssh-wrong-host", env.SSHGit.ClientKey, []byte("[127.0.0.1]:"+portOf(env.SSHGit.Host)+" "+fieldsAfterHost(other.KnownHosts)))

		g := rukpakv1alpha2.GitSource{Repository: env.SSHGit.URL(name), Ref: rukpakv1alpha2.GitRef{Branch: "main"}}
		g.Auth.Secret.Name = "git-ssh-wrong-host"
		gitBD(ctx, "git-ssh-wrong-host", g)
		Eventually(getBD(ctx, "git-ssh-wrong-host")).Should(haveCondition("Unpacked", "False", "UnpackFailed", "Host key verification failed"))
	})

	It("clones over ssh without known_hosts when auth.insecureSkipVerify is set (the adapter's fetch)", func(ctx context.Context) {
		name := "ssh-skip-" + randSuffix()
		repo, err := env.Git.NewRepo(name, filepath.Join("testdata", "namespaced", "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		commit, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		sshAuthSecret(ctx, "git-ssh-key-only", env.SSHGit.ClientKey, nil)

		g := rukpakv1alpha2.GitSource{Repository: env.SSHGit.URL(name), Ref: rukpakv1alpha2.GitRef{Commit: commit}}
		g.Auth.Secret.Name = "git-ssh-key-only"
		g.Auth.InsecureSkipVerify = true
		gitBD(ctx, "git-ssh-skip", g)
		Eventually(getBD(ctx, "git-ssh-skip")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Git.Ref", Equal(rukpakv1alpha2.GitRef{Commit: commit})),
		))
		app, err := getApp(ctx, "git-ssh-skip")
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Spec.Fetch[0].Inline).NotTo(BeNil(), "the adapter fetched it and hands it over inline")
	})

	It("clones from an untrusted HTTPS server only with auth.insecureSkipVerify", func(ctx context.Context) {
		repo, err := env.UntrustedGit.NewRepo("untrusted-"+randSuffix(), filepath.Join("testdata", "namespaced", "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())

		gitBD(ctx, "git-untrusted", rukpakv1alpha2.GitSource{Repository: repo.URL, Ref: rukpakv1alpha2.GitRef{Tag: "missing"}})
		Eventually(getBD(ctx, "git-untrusted")).Should(haveCondition("Unpacked", "False", "UnpackFailed", "certificate"))
		deleteAndWait(ctx, "git-untrusted")

		g := rukpakv1alpha2.GitSource{Repository: repo.URL, Ref: rukpakv1alpha2.GitRef{Branch: "main"}}
		g.Auth.InsecureSkipVerify = true
		gitBD(ctx, "git-untrusted-skip", g)
		Eventually(getBD(ctx, "git-untrusted-skip")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("deploys a push to the tracked branch without touching the BundleDeployment", func(ctx context.Context) {
		repo, err := env.Git.NewRepo("follow-"+randSuffix(), filepath.Join("testdata", "namespaced", "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		first, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		gitBD(ctx, "git-follow", rukpakv1alpha2.GitSource{Repository: repo.URL, Ref: rukpakv1alpha2.GitRef{Branch: "main"}})
		Eventually(getBD(ctx, "git-follow")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Git.Ref.Commit", Equal(first)),
		))
		generation := mustBD(ctx, "git-follow").Generation

		next := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(next, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pushed-later\ndata:\n  a: b\n"), 0o644)).To(Succeed())
		Expect(repo.Commit(next, "manifests", "second bundle")).To(Succeed())
		second, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())

		// kapp-controller re-fetches a tracked branch every 30 s (its floor).
		Eventually(getBD(ctx, "git-follow")).WithTimeout(2 * time.Minute).Should(And(
			HaveField("Status.ResolvedSource.Git.Ref.Commit", Equal(second)),
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
		))
		Expect(env.Client.Get(ctx, objKey("default", "pushed-later"), &corev1.ConfigMap{})).To(Succeed())
		Expect(mustBD(ctx, "git-follow").Generation).To(Equal(generation))
	})
})

var _ = Describe("plain bundles over HTTPS from an untrusted server", func() {
	It("downloads only with auth.insecureSkipVerify, with basic auth", func(ctx context.Context) {
		tgz, err := harness.TarGz(filepath.Join("testdata", "namespaced"))
		Expect(err).NotTo(HaveOccurred())
		url := env.UntrustedFiles.Put("/bundles/namespaced.tgz", tgz)
		basicAuthSecret(ctx, "https-basic-auth", env.UntrustedFiles.Username, env.UntrustedFiles.Password)

		httpBD(ctx, "https-untrusted", url, "https-basic-auth")
		Eventually(getBD(ctx, "https-untrusted")).Should(haveCondition("Unpacked", "False", "UnpackFailed", "certificate"))
		deleteAndWait(ctx, "https-untrusted")

		plainBD(ctx, "https-skip", "", func(bd *rukpakv1alpha2.BundleDeployment) {
			h := &rukpakv1alpha2.HTTPSource{URL: url}
			h.Auth.Secret.Name = "https-basic-auth"
			h.Auth.InsecureSkipVerify = true
			bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: h}
		})
		Eventually(getBD(ctx, "https-skip")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		plainBD(ctx, "https-skip-noauth", "", func(bd *rukpakv1alpha2.BundleDeployment) {
			h := &rukpakv1alpha2.HTTPSource{URL: url}
			h.Auth.InsecureSkipVerify = true
			bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: h}
		})
		Eventually(getBD(ctx, "https-skip-noauth")).Should(haveCondition("Unpacked", "False", "UnpackFailed", `unexpected status "401 Unauthorized"`))
	})
})
