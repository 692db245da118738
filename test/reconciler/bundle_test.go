package reconciler_test

import (
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// Bundles on their own: rukpak v0.16.0's Bundle API without a
// BundleDeployment, unpacked by the adapter itself (no kapp-controller is
// needed, none runs here) from the harness's registries, git and file
// servers, and their content served at status.contentURL.

// reported is how soon every outcome of an unpack must be on the Bundle.
const reported = 10 * time.Second

func v016Image(ref string) rukpakv1alpha1.BundleSource { return bdtest.V1alpha1Image(ref) }

func v016HTTP(url string) rukpakv1alpha1.BundleSource {
	return rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeHTTP, HTTP: &rukpakv1alpha1.HTTPSource{URL: url}}
}

func v016Git(repo, dir string, ref rukpakv1alpha1.GitRef) rukpakv1alpha1.BundleSource {
	return rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeGit, Git: &rukpakv1alpha1.GitSource{Repository: repo, Directory: dir, Ref: ref}}
}

func v016ConfigMaps(names ...string) rukpakv1alpha1.BundleSource {
	src := rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeConfigMaps}
	for _, n := range names {
		src.ConfigMaps = append(src.ConfigMaps, rukpakv1alpha1.ConfigMapSource{ConfigMap: rukpakv1alpha1.LocalObjectReference{Name: n}, Path: "manifests"})
	}
	return src
}

var (
	bundleUnpacked = func(kind string) types.GomegaMatcher {
		return bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseUnpacked, "True", "UnpackSuccessful", "Successfully unpacked the "+kind+" Bundle")
	}
	bundleFailing = func(msg string) types.GomegaMatcher {
		return And(bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseFailing, "False", "UnpackFailed", msg),
			HaveField("Status.ResolvedSource", BeNil()), HaveField("Status.ContentURL", BeEmpty()))
	}
)

// contentURLOf is where the adapter serves kind/name in this suite.
func contentURLOf(ctx context.Context, path string) string {
	webhooks, err := env.AdapterWebhookAddress(ctx)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return "https://" + webhooks + path
}

// filesUnder lists dir's files and directories as a tarball of it names
// them (manifests/, manifests/a.yaml), without rukpak's .gitignore placeholders.
func filesUnder(dir string) []string {
	var out []string
	ExpectWithOffset(1, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || d.Name() == ".gitignore" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})).To(Succeed())
	return out
}

// storedFor lists the content files the adapter keeps for the object uid.
func storedFor(uid string) func() ([]string, error) {
	return func() ([]string, error) {
		entries, err := os.ReadDir(contentDir())
		var out []string
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), uid+"-") {
				out = append(out, e.Name())
			}
		}
		return out, err
	}
}

type bundleCase struct {
	name, class string
	src         rukpakv1alpha1.BundleSource
	want        types.GomegaMatcher
}

var _ = Describe("a Bundle on its own", func() {
	It("is unpacked without a Pod from every source, and every failure is on it within seconds, in rukpak v0.16's phases and words", func(ctx context.Context) {
		sfx := bdtest.RandSuffix()
		bundles := bdtest.Testdata("rukpak-bundles")
		push := func(reg *harness.Registry, dir, repoTag string) string {
			ref, _, err := reg.PushDir(dir, repoTag)
			Expect(err).NotTo(HaveOccurred())
			return ref
		}
		noManifests := push(env.Registry, filepath.Join(bundles, "plain-v0", "no-manifests"), "standalone/plain-v0:no-manifests")
		registryValid := push(env.Registry, filepath.Join(bundles, "registry", "valid"), "standalone/registry:valid")
		registryInvalid := push(env.Registry, filepath.Join(bundles, "registry", "invalid"), "standalone/registry:invalid")
		private := push(env.PrivateRegistry, filepath.Join(bundles, "plain-v0", "valid"), "standalone/plain-v0:valid")
		pullSecret := "standalone-pull-" + sfx
		Expect(env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: pullSecret, Namespace: harness.SystemNamespace},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: env.PrivateRegistry.DockerConfigJSON()},
		})).To(Succeed())
		privateSrc := v016Image(private)
		privateSrc.Image.ImagePullSecretName = pullSecret

		repo, err := env.Git.NewRepo("standalone-"+sfx, filepath.Join(bundles, "plain-v0", "valid", "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		Expect(repo.Tag("v0.0.1")).To(Succeed())
		commit, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		deep, err := env.Git.NewRepo("standalone-dir-"+sfx, filepath.Join(bundles, "plain-v0", "valid", "manifests"), "dev/deploy/manifests")
		Expect(err).NotTo(HaveOccurred())
		sshSecret := "standalone-ssh-" + sfx
		Expect(env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: sshSecret, Namespace: harness.SystemNamespace},
			Type:       corev1.SecretTypeSSHAuth,
			Data:       map[string][]byte{"ssh-privatekey": env.SSHGit.ClientKey, "ssh-knownhosts": env.SSHGit.KnownHosts},
		})).To(Succeed())
		overSSH := v016Git(env.SSHGit.URL("standalone-"+sfx), "", rukpakv1alpha1.GitRef{Branch: "main"})
		overSSH.Git.Auth.Secret.Name = sshSecret

		validTgz, err := harness.TarGz(filepath.Join(bundles, "plain-v0", "valid"))
		Expect(err).NotTo(HaveOccurred())
		chartTgz, err := harness.TarGz(filepath.Join(env.Root, "examples", "charts"))
		Expect(err).NotTo(HaveOccurred())
		validURL := env.Files.Put("/standalone/"+sfx+"/valid.tgz", validTgz)
		chartURL := env.Files.Put("/standalone/"+sfx+"/hello-world-0.1.0.tgz", chartTgz)
		notChartURL := env.Files.Put("/standalone/"+sfx+"/not-a-chart.tgz", validTgz)
		licenseURL := env.Files.Put("/standalone/"+sfx+"/LICENSE", []byte("Apache License\nVersion 2.0, January 2004\n"))

		cmValid, cmInvalid, cmLate := "standalone-valid-"+sfx, "standalone-invalid-"+sfx, "standalone-late-"+sfx
		bdtest.ConfigMapFrom(ctx, cmValid, filepath.Join(bundles, "plain-v0", "valid", "manifests"))
		// rukpak's invalid ConfigMap: the subdir bundle flattened, its
		// .gitignore placeholder included.
		bdtest.ConfigMapFrom(ctx, cmInvalid, filepath.Join(bundles, "plain-v0", "subdir", "manifests"))
		missingTag := images["plain-v0/valid"][:strings.LastIndex(images["plain-v0/valid"], ":")] + ":no-such-tag"

		plain, helm, registry := rukpakv1alpha1.ClassPlain, rukpakv1alpha1.ClassHelm, rukpakv1alpha1.ClassRegistry
		cases := []bundleCase{
			{"sa-image-" + sfx, plain, v016Image(images["plain-v0/valid"]), And(bundleUnpacked("image"), HaveField("Status.ResolvedSource.Image.Ref", pinned["plain-v0/valid"]))},
			{"sa-alias-" + sfx, harness.AliasPlainClass, v016Image(images["plain-v0/valid"]), bundleUnpacked("image")},
			{"sa-private-" + sfx, plain, privateSrc, And(bundleUnpacked("image"), HaveField("Status.ResolvedSource.Image.ImagePullSecretName", pullSecret))},
			{"sa-commit-" + sfx, plain, v016Git(repo.URL, "", rukpakv1alpha1.GitRef{Commit: commit}), And(bundleUnpacked("git"), HaveField("Status.ResolvedSource.Git.Ref.Commit", commit))},
			{"sa-tag-" + sfx, plain, v016Git(repo.URL, "", rukpakv1alpha1.GitRef{Tag: "v0.0.1"}), And(bundleUnpacked("git"), HaveField("Status.ResolvedSource.Git.Ref.Commit", commit))},
			{"sa-branch-" + sfx, plain, v016Git(repo.URL, "", rukpakv1alpha1.GitRef{Branch: "main"}), And(bundleUnpacked("git"), HaveField("Status.ResolvedSource.Git.Ref.Commit", commit))},
			{"sa-dir-" + sfx, plain, v016Git(deep.URL, "./dev/deploy", rukpakv1alpha1.GitRef{Branch: "main"}), And(bundleUnpacked("git"), HaveField("Status.ResolvedSource.Git.Directory", "./dev/deploy"))},
			{"sa-ssh-" + sfx, plain, overSSH, And(bundleUnpacked("git"), HaveField("Status.ResolvedSource.Git.Ref.Commit", commit))},
			{"sa-http-" + sfx, plain, v016HTTP(validURL), And(bundleUnpacked("http"), HaveField("Status.ResolvedSource.HTTP.URL", validURL))},
			{"sa-configmaps-" + sfx, plain, v016ConfigMaps(cmValid), bundleUnpacked("configMaps")},
			{"sa-registry-" + sfx, registry, v016Image(registryValid), bundleUnpacked("image")},
			{"sa-helm-" + sfx, helm, v016HTTP(chartURL), bundleUnpacked("http")},
			// rukpak refused subdirectories of manifests/; rukpak-kapp reads
			// them, for Bundles as for BundleDeployments (docs/v1alpha1.md).
			{"sa-subdir-" + sfx, plain, v016Image(images["plain-v0/subdir"]), bundleUnpacked("image")},

			{"sa-empty-" + sfx, plain, v016Image(images["plain-v0/empty"]), bundleFailing("invalid bundle: readdir manifests: file does not exist")},
			{"sa-no-manifests-" + sfx, plain, v016Image(noManifests), bundleFailing("invalid bundle: found zero objects: plain+v0 bundles are required to contain at least one object")},
			{"sa-cm-invalid-" + sfx, plain, v016ConfigMaps(cmInvalid), bundleFailing("json: cannot unmarshal string into Go value")},
			{"sa-cm-missing-" + sfx, plain, v016ConfigMaps("non-exist"),
				bundleFailing(`source bundle content: get configmap ` + harness.SystemNamespace + `/non-exist: ConfigMap "non-exist" not found`)},
			{"sa-cm-late-" + sfx, plain, v016ConfigMaps(cmLate), bundleFailing(`ConfigMap "` + cmLate + `" not found`)},
			{"sa-no-tag-" + sfx, plain, v016Image(missingTag), bundleFailing("source bundle content: ")},
			{"sa-private-no-secret-" + sfx, plain, v016Image(private), bundleFailing("source bundle content: ")},
			{"sa-registry-invalid-" + sfx, registry, v016Image(registryInvalid),
				bundleFailing("convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled")},
			{"sa-404-" + sfx, helm, v016HTTP(env.Files.URL("/standalone/" + sfx + "/xxx")), bundleFailing(`unexpected status "404 Not Found"`)},
			{"sa-license-" + sfx, helm, v016HTTP(licenseURL), bundleFailing("gzip: invalid header")},
			{"sa-not-a-chart-" + sfx, helm, v016HTTP(notChartURL), bundleFailing("Chart.yaml file is missing")},
			{"sa-upload-" + sfx, plain, rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeUpload, Upload: &rukpakv1alpha1.UploadSource{}},
				bundleFailing(`source type "upload" is not served by rukpak-kapp`)},
		}
		for _, c := range cases {
			bdtest.StandaloneBundle(ctx, c.name, c.class, c.src)
		}
		bdtest.StandaloneBundle(ctx, "sa-unclaimed-"+sfx, "someone-elses", v016Image(images["plain-v0/valid"]))
		for _, c := range cases {
			Eventually(bdtest.GetBundle(ctx, c.name)).WithTimeout(reported).Should(And(c.want,
				HaveField("Status.ObservedGeneration", int64(1))), c.name)
		}

		By("an unpacked Bundle says where its content is; one of a class the adapter does not claim keeps an empty status, as rukpak left it")
		Expect(bdtest.GetBundle(ctx, "sa-image-"+sfx)()).To(HaveField("Status.ContentURL", contentURLOf(ctx, "/bundles/sa-image-"+sfx+".tgz")))
		Consistently(bdtest.GetBundle(ctx, "sa-unclaimed-"+sfx)).WithTimeout(3 * time.Second).Should(HaveField("Status", rukpakv1alpha1.BundleStatus{}))

		By("a ConfigMap that appears unpacks the Bundle that waited for it at once, not at its next retry")
		bdtest.ConfigMapFrom(ctx, cmLate, filepath.Join(bundles, "plain-v0", "valid", "manifests"))
		Eventually(bdtest.GetBundle(ctx, "sa-cm-late-"+sfx)).WithTimeout(reported).Should(bundleUnpacked("configMaps"))

		By("no Pod was made for any of it")
		pods := &corev1.PodList{}
		Expect(env.Client.List(ctx, pods)).To(Succeed())
		Expect(pods.Items).To(BeEmpty())
	})

	It("serves its content at contentURL to accounts that may get it, and to no one else", func(ctx context.Context) {
		sfx := bdtest.RandSuffix()
		name, other := "content-"+sfx, "content-other-"+sfx
		bdtest.StandaloneBundle(ctx, name, rukpakv1alpha1.ClassPlain, v016Image(images["plain-v0/valid"]))
		bdtest.StandaloneBundle(ctx, other, rukpakv1alpha1.ClassPlain, v016Image(images["plain-v0/valid"]))
		registry, _, err := env.Registry.PushDir(bdtest.Testdata("rukpak-bundles", "registry", "valid"), "standalone/registry:content")
		Expect(err).NotTo(HaveOccurred())
		bdtest.StandaloneBundle(ctx, "content-registry-"+sfx, rukpakv1alpha1.ClassRegistry, v016Image(registry))
		for _, n := range []string{name, other, "content-registry-" + sfx} {
			Eventually(bdtest.GetBundle(ctx, n)).WithTimeout(reported).Should(bundleUnpacked("image"), n)
		}
		url := contentURLOf(ctx, "/bundles/"+name+".tgz")
		Expect(bdtest.GetBundle(ctx, name)()).To(HaveField("Status.ContentURL", url))

		c, err := env.ContentClient(ctx)
		Expect(err).NotTo(HaveOccurred())
		reader, err := env.AccountToken(ctx, "default", "bundle-reader-"+sfx, "bundle-reader")
		Expect(err).NotTo(HaveOccurred())
		nobody, err := env.AccountToken(ctx, "default", "nobody-"+sfx, "")
		Expect(err).NotTo(HaveOccurred())
		pathOfOne := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "content-of-" + name},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/bundles/" + name + ".tgz"}, Verbs: []string{"get"}}},
		}
		Expect(env.Client.Create(ctx, pathOfOne)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, pathOfOne) })
		viewer, err := env.AccountToken(ctx, "default", "viewer-"+sfx, pathOfOne.Name)
		Expect(err).NotTo(HaveOccurred())
		// get on the objects themselves (what kubectl get shows of them,
		// never the Secret manifests their content may hold).
		getObjects := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "get-bundles-" + sfx},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"core.rukpak.io"}, Resources: []string{"bundles", "bundledeployments"}, Verbs: []string{"get", "list", "watch"}}},
		}
		Expect(env.Client.Create(ctx, getObjects)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, getObjects) })
		objectGetter, err := env.AccountToken(ctx, "default", "object-getter-"+sfx, getObjects.Name)
		Expect(err).NotTo(HaveOccurred())

		By("rukpak's bundle-reader ClusterRole: the bundle's files as it was unpacked")
		code, entries, body, err := bdtest.Download(ctx, c, url, reader)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(entries).To(ConsistOf(filesUnder(bdtest.Testdata("rukpak-bundles", "plain-v0", "valid"))))

		By("a rule naming one Bundle's path: that Bundle's content, and no other's")
		code, _, body, err = bdtest.Download(ctx, c, url, viewer)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), body)
		code, _, body, err = bdtest.Download(ctx, c, contentURLOf(ctx, "/bundles/"+other+".tgz"), viewer)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusForbidden), body)

		By("get on the Bundles and BundleDeployments themselves is not enough")
		code, _, body, err = bdtest.Download(ctx, c, url, objectGetter)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusForbidden), body)
		Expect(body).To(ContainSubstring("may not get /bundles/" + name + ".tgz"))

		By("an account without the path, and no token at all, are refused")
		code, _, body, err = bdtest.Download(ctx, c, url, nobody)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusForbidden))
		Expect(body).To(ContainSubstring("may not get /bundles/" + name + ".tgz"))
		code, _, _, err = bdtest.Download(ctx, c, url, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, _, _, err = bdtest.Download(ctx, c, url, "not-a-token")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusUnauthorized))

		By("a registry+v1 Bundle: converted to a plain bundle, as rukpak v0.16 served it")
		code, entries, body, err = bdtest.Download(ctx, c, contentURLOf(ctx, "/bundles/content-registry-"+sfx+".tgz"), reader)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(entries).To(ContainElements("manifests/", "manifests/0000.yaml"))
		Expect(entries).NotTo(ContainElement(HavePrefix("metadata/")))

		By("a Bundle a v1alpha1 BundleDeployment generated, once kapp-controller fetched it")
		bdName := "content-v1alpha1-" + sfx
		bdtest.V1alpha1BD(ctx, bdName, rukpakv1alpha1.ClassPlain, bdtest.V1alpha1Image(images["plain-v0/valid"]))
		appSucceeded(ctx, bdName, pinned["plain-v0/valid"])
		generatedName := bundleOf(ctx, bdName)
		Eventually(bdtest.GetBundle(ctx, generatedName)).Should(And(bundleUnpacked("image"),
			HaveField("Status.ContentURL", contentURLOf(ctx, "/bundles/"+generatedName+".tgz"))))
		code, entries, body, err = bdtest.Download(ctx, c, contentURLOf(ctx, "/bundles/"+generatedName+".tgz"), reader)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(entries).To(ConsistOf(filesUnder(bdtest.Testdata("rukpak-bundles", "plain-v0", "valid"))))

		By("a v1alpha2 BundleDeployment, as rukpak v0.24 served it, once kapp-controller deployed it")
		v2 := "content-v1alpha2-" + sfx
		bdtest.PlainBD(ctx, v2, images["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, v2)).Should(HaveField("Status.ContentURL", BeEmpty()), "nothing is said before kapp-controller fetched")
		appSucceeded(ctx, v2, pinned["plain-v0/valid"])
		bdURL := contentURLOf(ctx, "/bundles/bundledeployments/"+v2+".tgz")
		Eventually(bdtest.GetBD(ctx, v2)).Should(And(HaveField("Status.ContentURL", bdURL), HaveField("Status.ResolvedSource.Image.Ref", pinned["plain-v0/valid"])))
		code, entries, body, err = bdtest.Download(ctx, c, bdURL, reader)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(entries).To(ConsistOf(filesUnder(bdtest.Testdata("rukpak-bundles", "plain-v0", "valid"))))
		code, _, _, err = bdtest.Download(ctx, c, bdURL, viewer)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusForbidden))
		By("get bundledeployments alone does not reach a BundleDeployment's content")
		code, _, body, err = bdtest.Download(ctx, c, bdURL, objectGetter)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusForbidden), body)
	})

	It("after a restart, is fetched again from the source it was pinned to, with nothing written, and its content goes with it", func(ctx context.Context) {
		sfx := bdtest.RandSuffix()
		bundles := bdtest.Testdata("rukpak-bundles")
		tgz, err := harness.TarGz(filepath.Join(bundles, "plain-v0", "valid"))
		Expect(err).NotTo(HaveOccurred())
		path := "/standalone/" + sfx + "/restart.tgz"
		httpName, imageName := "restart-http-"+sfx, "restart-image-"+sfx
		bdtest.StandaloneBundle(ctx, httpName, rukpakv1alpha1.ClassPlain, v016HTTP(env.Files.Put(path, tgz)))
		tag := "standalone/restart-" + sfx + ":v1"
		ref, _, err := env.Registry.PushDir(filepath.Join(bundles, "plain-v0", "valid"), tag)
		Expect(err).NotTo(HaveOccurred())
		bdtest.StandaloneBundle(ctx, imageName, rukpakv1alpha1.ClassPlain, v016Image(ref))
		before := map[string]rukpakv1alpha1.Bundle{}
		for _, n := range []string{httpName, imageName} {
			Eventually(bdtest.GetBundle(ctx, n)).WithTimeout(reported).Should(bundleUnpacked(map[string]string{httpName: "http", imageName: "image"}[n]), n)
			b, err := bdtest.GetBundle(ctx, n)()
			Expect(err).NotTo(HaveOccurred())
			before[n] = b
			Eventually(storedFor(string(b.UID))).Should(HaveLen(1), n)
		}

		By("at rest: no fetch and no write")
		hits := env.Files.Hits(path)
		Consistently(func() int { return env.Files.Hits(path) }).WithTimeout(3 * time.Second).Should(Equal(hits))
		Expect(bdtest.GetBundle(ctx, httpName)()).To(HaveField("ResourceVersion", before[httpName].ResourceVersion))

		By("a restart while the image's tag moved: the pinned digest is fetched again, the status stays as it was")
		_, _, err = env.Registry.PushDir(filepath.Join(bundles, "plain-v0", "subdir"), tag)
		Expect(err).NotTo(HaveOccurred())
		restartAdapter(ctx)
		Eventually(func() int { return env.Files.Hits(path) }).WithTimeout(reported).Should(Equal(hits + 1))
		for _, n := range []string{httpName, imageName} {
			Eventually(storedFor(string(before[n].UID))).WithTimeout(reported).Should(HaveLen(1), n)
			Expect(bdtest.GetBundle(ctx, n)()).To(HaveField("ResourceVersion", before[n].ResourceVersion), "%s was written after the restart", n)
		}
		c, err := env.ContentClient(ctx)
		Expect(err).NotTo(HaveOccurred())
		reader, err := env.AccountToken(ctx, "default", "restart-reader-"+sfx, "bundle-reader")
		Expect(err).NotTo(HaveOccurred())
		code, entries, body, err := bdtest.Download(ctx, c, before[imageName].Status.ContentURL, reader)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(entries).To(ConsistOf(filesUnder(filepath.Join(bundles, "plain-v0", "valid"))), "the content the Bundle was unpacked from, not the tag's new one")

		By("deleting a Bundle removes what was stored for it")
		gone := before[httpName]
		Expect(env.Client.Delete(ctx, &gone)).To(Succeed())
		Eventually(storedFor(string(before[httpName].UID))).WithTimeout(reported).Should(BeEmpty())
		code, _, _, err = bdtest.Download(ctx, c, before[httpName].Status.ContentURL, reader)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusNotFound))
		Expect(env.Files.Hits(path)).To(Equal(hits+1), "a deleted Bundle is not fetched")
	})
})
