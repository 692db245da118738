package packaging_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// A catalog whose operator (headscale-operator 0.1.1, 0.1.2 replacing it,
// 0.1.3 replacing 0.1.2) runs an image of its own and names an operand
// image in a RELATED_IMAGE_ variable, all in one registry (the outside),
// is pushed there as a package repository, copied with imgpkg to a second
// registry (the inside: once through a tarball, as a team carries it over
// an air gap, once directly), and the outside is fenced off: any request
// that still reaches it is refused and counted. Installed through the
// calls kctrl makes, from the inside only.
var _ = Describe("a package repository relocated with imgpkg copy", func() {
	It("installs and walks its channel with the original registry unreachable, the operator running its images from the copy by digest", func(ctx context.Context) {
		const ns = "catalog-airgap"
		refName := "stable.headscale-operator." + catalog.DefaultDomain
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		outside, err := harness.StartRegistry("", "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(outside.Stop)
		inside, err := harness.StartRegistry("", "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(inside.Stop)

		pinned, digests := pushAirgapCatalog(ctx, outside)
		imgpkg := filepath.Join(env.Root, "bin", "imgpkg")
		tarball := filepath.Join(GinkgoT().TempDir(), "repository.tar")
		By("imgpkg copy -b " + pinned + " --to-tar repository.tar")
		run(ctx, imgpkg, "copy", "-b", pinned, "--to-tar", tarball)
		By("imgpkg copy --tar repository.tar --to-repo " + inside.Host + "/mirror/repository")
		run(ctx, imgpkg, "copy", "--tar", tarball, "--to-repo", inside.Host+"/mirror/repository")
		By("imgpkg copy -b " + pinned + " --to-repo " + inside.Host + "/direct/repository, registry to registry")
		run(ctx, imgpkg, "copy", "-b", pinned, "--to-repo", inside.Host+"/direct/repository")
		digest := pinned[strings.Index(pinned, "@"):]
		mirror := inside.Host + "/mirror/repository"
		for what, d := range digests {
			for _, repo := range []string{mirror, inside.Host + "/direct/repository"} {
				ref, err := name.NewDigest(repo+"@"+d, name.Insecure)
				Expect(err).NotTo(HaveOccurred())
				_, err = remote.Head(ref, remote.WithContext(ctx))
				Expect(err).NotTo(HaveOccurred(), "imgpkg copied %s to %s", what, repo)
			}
		}

		By("the outside is fenced off: from here every request to it is refused and fails the spec")
		outside.Fence()
		DeferCleanup(func() {
			Expect(outside.FencedOff()).To(BeZero(), "requests reached the registry behind the fence")
		})
		By("kctrl package repository add -r mirror --url " + mirror + digest)
		Expect(harness.KctrlRepositoryAdd(ctx, env.ControlPlane.Config, ns, "mirror", mirror+digest)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, "headscale")).To(Succeed())
		})

		By("kctrl package install -i headscale -p " + refName + " --version 0.1.1")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: "headscale", Package: refName, Version: "0.1.1",
				Values: []byte("installNamespace: catalog-airgap-headscale\n")})
		})).To(Succeed())
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "headscale." + ns}, bd)).To(Succeed())
		Expect(bd.Spec.Source.Image.Ref).To(Equal(mirror+"@"+digests["bundle 0.1.1"]), "kbld set the bundle image from the copy's lock")
		expectRunsFrom(ctx, mirror+"@"+digests["operator 0.1.1"], mirror+"@"+digests["operand"])

		By("kctrl package installed update -i headscale --version 0.1.3: two edges, walked through 0.1.2, every step from the copy")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, "headscale", "0.1.3")
		})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "headscale." + ns}, bd)).To(Succeed())
			g.Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
		}).WithContext(ctx).Should(Succeed())
		Expect(bd.Spec.Source.Image.Ref).To(Equal(mirror + "@" + digests["bundle 0.1.3"]))
		steps, err := upgradeSteps(ctx, ns, "headscale")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(steps, "\n")).To(ContainSubstring("0.1.2"), "the walk installed 0.1.2 on its way")
		expectRunsFrom(ctx, mirror+"@"+digests["operator 0.1.3"], mirror+"@"+digests["operand"])
	}, SpecTimeout(6*time.Minute))
})

// expectRunsFrom checks the operator's Deployment runs operator and names
// operand in its RELATED_IMAGE_ variable.
func expectRunsFrom(ctx context.Context, operator, operand string) {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "catalog-airgap-headscale", Name: "headscale-operator-controller-manager"}, d)).To(Succeed())
	var c *corev1.Container
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == "manager" {
			c = &d.Spec.Template.Spec.Containers[i]
		}
	}
	Expect(c).NotTo(BeNil())
	Expect(c.Image).To(Equal(operator))
	Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "RELATED_IMAGE_HEADSCALE", Value: operand}))
}

// pushAirgapCatalog pushes headscale-operator's three bundles, the images
// they run and their catalog, as a package repository, all to outside; it
// returns the repository pinned by digest and the digests pushed, by what
// they are. The catalog lists 0.1.1's related images as opm does; the
// others' are read from their CSVs (Deployments and relatedImages).
func pushAirgapCatalog(ctx context.Context, outside *harness.Registry) (string, map[string]string) {
	corpus := filepath.Join(env.Root, "test", "testdata", "registry-v1-corpus", "headscale-operator", "0.1.1")
	digests := map[string]string{}
	push := func(what, repoTag, content string) string {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "what"), []byte(content), 0o644)).To(Succeed())
		ref, d, err := outside.PushDir(dir, repoTag)
		Expect(err).NotTo(HaveOccurred())
		digests[what] = d.String()
		return ref
	}
	operand := push("operand", "airgap/operands/headscale:v1", "operand")
	csvFile := filepath.Join("manifests", "headscale-operator.clusterserviceversion.yaml")
	original, err := os.ReadFile(filepath.Join(corpus, csvFile))
	Expect(err).NotTo(HaveOccurred())
	var cfg declcfg.DeclarativeConfig
	cfg.Packages = []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "headscale-operator", DefaultChannel: "stable"}}
	channel := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: "headscale-operator", Name: "stable"}
	previous := ""
	for _, v := range []string{"0.1.1", "0.1.2", "0.1.3"} {
		operator := push("operator "+v, "airgap/operators/headscale-operator:v"+v, "operator "+v)
		dir := GinkgoT().TempDir()
		Expect(os.CopyFS(dir, os.DirFS(corpus))).To(Succeed())
		replaces := "replaces: headscale-operator.v0.1.0"
		if previous != "" {
			replaces = "replaces: headscale-operator.v" + previous
		}
		csv := strings.NewReplacer(
			"                  value: explicit\n                image: ghcr.io/jim-coyne/headscale-operator@sha256:c2d42085c12d6b7847f91055c7f004a605a5acf8f45064870d6c9fad78145f2e",
			"                  value: explicit\n                - name: RELATED_IMAGE_HEADSCALE\n                  value: "+operand+"\n                image: "+operator,
			"name: headscale-operator.v0.1.1", "name: headscale-operator.v"+v,
			// The CSV relates its operand image, as OLM's convention has it.
			"  version: 0.1.1", "  version: "+v+"\n  relatedImages:\n  - name: headscale\n    image: "+operand,
			"replaces: headscale-operator.v0.1.0", replaces,
		).Replace(string(original))
		Expect(csv).To(ContainSubstring(operator))
		Expect(os.WriteFile(filepath.Join(dir, csvFile), []byte(csv), 0o644)).To(Succeed())
		bundle, d, err := outside.PushDir(dir, "airgap/bundles/headscale-operator:v"+v)
		Expect(err).NotTo(HaveOccurred())
		digests["bundle "+v] = d.String()
		name := "headscale-operator.v" + v
		entry := declcfg.ChannelEntry{Name: name}
		if previous != "" {
			entry.Replaces = "headscale-operator.v" + previous
		}
		channel.Entries = append(channel.Entries, entry)
		b := declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: name, Package: "headscale-operator", Image: bundle,
			Properties: []property.Property{property.MustBuildPackage("headscale-operator", v)}}
		if v == "0.1.1" {
			b.RelatedImages = []declcfg.RelatedImage{{Image: bundle}, {Name: "manager", Image: operator}, {Name: "headscale", Image: operand}}
		}
		cfg.Bundles = append(cfg.Bundles, b)
		previous = v
	}
	cfg.Channels = []declcfg.Channel{channel}
	pinned, stderr := pushCatalog(ctx, cfg, outside.Host+"/airgap/repository")
	Expect(stderr).NotTo(ContainSubstring("not locked"))
	return pinned, digests
}

// run runs a command a user would, failing the spec with its output.
func run(ctx context.Context, name string, args ...string) {
	GinkgoHelper()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s %s: %s", filepath.Base(name), strings.Join(args, " "), out)
}

// pushCatalog writes cfg as a catalog and pushes it with `rukpak-kapp
// catalog push` to repository:v1, as a user would, with flags after the
// defaults; it returns the repository pinned by digest and what the push
// said on stderr.
func pushCatalog(ctx context.Context, cfg declcfg.DeclarativeConfig, repository string, flags ...string) (string, string) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	f, err := os.Create(filepath.Join(dir, "catalog.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(declcfg.WriteYAML(cfg, f)).To(Succeed())
	Expect(f.Close()).To(Succeed())
	cmd := exec.CommandContext(ctx, rukpakKapp, append([]string{"catalog", "push", "--catalog", dir, "--repository", repository, "--tag", "v1"}, flags...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "catalog push: %s", stderr.String())
	return strings.TrimSpace(string(out)), stderr.String()
}
