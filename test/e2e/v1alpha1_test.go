package e2e_test

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// rukpak v0.16.0's own v1alpha1 cases (its test/e2e, the BundleDeployment
// specs with embedded templates, and the examples of its docs), with its
// test bundles served from the harness's registry, git and file servers,
// through the real kapp-controller. Each expects the conditions and reasons
// rukpak v0.16.0 reported; where rukpak-kapp differs on purpose the
// difference is the one docs/conformance.md lists for v1alpha2.

var (
	v1alpha1BD       = bdtest.V1alpha1BD
	getV1alpha1BD    = bdtest.GetV1alpha1BD
	hasCondition     = bdtest.HaveV1alpha1Condition
	bundlesOf        = bdtest.BundlesOf
	updateV1alpha1BD = bdtest.UpdateV1alpha1BD
)

// generatedOf is the name of the Bundle bd's template generates now.
func generatedOf(ctx context.Context, name string) string {
	bd, err := getV1alpha1BD(ctx, name)()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return templates.Desired(bd).Name
}

// v016Case is one BundleDeployment of rukpak v0.16.0's suite and what
// rukpak reported for it.
type v016Case struct {
	name, class string
	src         rukpakv1alpha1.BundleSource
	config      string
	want        types.GomegaMatcher
}

func (c v016Case) create(ctx context.Context) {
	v1alpha1BD(ctx, c.name, c.class, c.src, func(bd *rukpakv1alpha1.BundleDeployment) {
		bd.Spec.Template.Labels = map[string]string{"app": c.name}
		if c.config != "" {
			bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"values":` + quoteJSON(c.config) + `}`)}
		}
	})
}

func image(ref string) rukpakv1alpha1.BundleSource { return bdtest.V1alpha1Image(ref) }

func httpSource(url string) rukpakv1alpha1.BundleSource {
	return rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeHTTP, HTTP: &rukpakv1alpha1.HTTPSource{URL: url}}
}

func gitSource(repo, dir string, ref rukpakv1alpha1.GitRef) rukpakv1alpha1.BundleSource {
	return rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeGit, Git: &rukpakv1alpha1.GitSource{Repository: repo, Directory: dir, Ref: ref}}
}

var (
	installed    = hasCondition("Installed", "True", "InstallationSucceeded", "Instantiated bundle")
	unpacked     = hasCondition("HasValidBundle", "True", "UnpackSuccessful", "Successfully unpacked the")
	unpackFailed = func(msg string) types.GomegaMatcher {
		return hasCondition("HasValidBundle", "False", "UnpackFailed", msg)
	}
	notYetInstalled = WithTransform(func(bd *rukpakv1alpha1.BundleDeployment) string { return condOf(bd, "Installed") }, Not(HavePrefix("True")))
	installedAsIs   = And(unpacked, installed, hasCondition("Healthy", "True", "Healthy", "BundleDeployment is healthy"))
	failedToUnpack  = func(msg string) types.GomegaMatcher {
		return And(unpackFailed("Failed to unpack the "), unpackFailed(msg), notYetInstalled)
	}
)

// runCases creates every case at once (kapp-controller works on them side
// by side) and waits for each to be reported as rukpak reported it.
func runCases(ctx context.Context, cases []v016Case) {
	for _, c := range cases {
		c.create(ctx)
	}
	for _, c := range cases {
		EventuallyWithOffset(1, getV1alpha1BD(ctx, c.name)).Should(c.want, c.name)
	}
}

var _ = Describe("rukpak v0.16.0's v1alpha1 BundleDeployments", func() {
	It("plain bundles: install, fail as rukpak reported, follow template changes, regenerate a deleted Bundle and remove what they installed", func(ctx context.Context) {
		repo, err := env.Git.NewRepo("v016-combo-"+randSuffix(), filepath.Join(helloBundle(), "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		Expect(repo.Tag("v0.0.1")).To(Succeed())
		// rukpak's suite ran these one after the other; here they run side by
		// side, so the bundle that installs the OLM CRDs comes afterwards.
		runCases(ctx, []v016Case{
			{name: "olm-missing-crds", class: rukpakv1alpha1.ClassPlain, src: image(images["plain-v0/invalid-missing-crds"]), want: And(unpacked,
				hasCondition("Installed", "False", "InstallFailed", "required resource not found"),
				hasCondition("Installed", "False", "InstallFailed", "Expected to find kind 'operators.coreos.com/v1"),
				hasCondition("Healthy", "False", "InstallationStatusFalse", "Installed condition is false"))},
			{name: "olm-empty", class: rukpakv1alpha1.ClassPlain, src: image(images["plain-v0/empty"]), want: failedToUnpack("readdir manifests: file does not exist")},
			{name: "olm-no-manifests", class: rukpakv1alpha1.ClassPlain, src: image(images["plain-v0/no-manifests"]),
				want: failedToUnpack("found zero objects: plain+v0 bundles are required to contain at least one object")},
			// rukpak refused manifests/ subdirectories (UnpackFailed); rukpak-kapp
			// reads them, as docs/conformance.md lists for v1alpha2: this image
			// (built as rukpak's, without the .gitignore placeholder) installs
			// the Namespaces of both files.
			{name: "olm-apis", class: rukpakv1alpha1.ClassPlain, src: image(images["plain-v0/subdir"]), want: installedAsIs},
			{name: "olm-dependent", class: rukpakv1alpha1.ClassPlain, src: image(images["plain-v0/dependent"]),
				want: hasCondition("Installed", "False", "InstallFailed", "required resource not found")},
			{name: "combo-git-tag", class: rukpakv1alpha1.ClassPlain, src: gitSource(repo.URL, "", rukpakv1alpha1.GitRef{Tag: "v0.0.1"}), want: installedAsIs},
		})

		By("a Bundle holds what it was unpacked from, pinned, and is owned by its BundleDeployment")
		commit, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		Expect(bundlesOf(ctx, "combo-git-tag")()).To(ConsistOf(And(
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseUnpacked, "True", "UnpackSuccessful", "Successfully unpacked the git Bundle"),
			HaveField("Status.ResolvedSource.Git.Ref", rukpakv1alpha1.GitRef{Commit: commit}),
			HaveField("Labels", And(HaveKeyWithValue("app", "combo-git-tag"), HaveKeyWithValue(rukpakv1alpha1.LabelOwnerKind, "BundleDeployment"),
				HaveKeyWithValue(rukpakv1alpha1.LabelOwnerName, "combo-git-tag"))),
			HaveField("OwnerReferences", ContainElement(HaveField("Name", "combo-git-tag"))),
		)))
		// Namespaced objects without a namespace went to the system namespace.
		Expect(env.Client.Get(ctx, objKey(harness.SystemNamespace, "hello-settings"), &corev1.ConfigMap{})).To(Succeed())

		By("the providing BundleDeployment installs the dependent one's API")
		(v016Case{name: "olm-provides", class: rukpakv1alpha1.ClassPlain, src: image(images["plain-v0/provides"])}).create(ctx)
		Eventually(getV1alpha1BD(ctx, "olm-dependent")).WithTimeout(3 * time.Minute).Should(installed)
		for _, name := range []string{"olm-dependent", "olm-provides", "olm-missing-crds"} {
			deleteAndWait(ctx, name)
		}

		runCases(ctx, []v016Case{{name: "olm-crds", class: rukpakv1alpha1.ClassPlain, src: image(images["plain-v0/valid"]), want: installedAsIs}})

		By("a template that cannot unpack: a second Bundle fails, the first stays installed and active")
		first := generatedOf(ctx, "olm-crds")
		updateV1alpha1BD(ctx, "olm-crds", func(bd *rukpakv1alpha1.BundleDeployment) {
			bd.Spec.Template.Spec.Source = gitSource(repo.URL, "", rukpakv1alpha1.GitRef{Tag: "no-such-tag"})
		})
		broken := generatedOf(ctx, "olm-crds")
		Eventually(getV1alpha1BD(ctx, "olm-crds")).Should(And(unpackFailed("Failed to unpack the "+broken+" Bundle"), bdtest.HaveActiveBundle(first),
			WithTransform(func(bd *rukpakv1alpha1.BundleDeployment) string { return condOf(bd, "Installed") }, Equal("True/InstallationSucceeded"))))
		Expect(bundlesOf(ctx, "olm-crds")()).To(HaveLen(2))

		By("a template that installs: the new Bundle becomes active and the others go")
		updateV1alpha1BD(ctx, "olm-crds", func(bd *rukpakv1alpha1.BundleDeployment) {
			bd.Spec.Template.Spec.Source = image(images["plain-v0/valid"])
			bd.Spec.Template.Labels = map[string]string{"app": "olm-crds", "version": "2"}
		})
		current := generatedOf(ctx, "olm-crds")
		Eventually(getV1alpha1BD(ctx, "olm-crds")).Should(And(installed, bdtest.HaveActiveBundle(current)))
		Eventually(bundlesOf(ctx, "olm-crds")).Should(ConsistOf(HaveField("Name", current)))

		By("a generated Bundle deleted by hand is made again")
		gone, err := bundlesOf(ctx, "olm-crds")()
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Delete(ctx, &gone[0])).To(Succeed())
		Eventually(bundlesOf(ctx, "olm-crds")).Should(ConsistOf(And(HaveField("Name", current), HaveField("UID", Not(Equal(gone[0].UID))),
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseUnpacked, "True", "UnpackSuccessful", ""))))
		Eventually(getV1alpha1BD(ctx, "olm-crds")).Should(And(installed, bdtest.HaveActiveBundle(current)))

		By("deleting the BundleDeployment removes its CRDs and its Bundles")
		Expect(ownedCRDs(ctx, "olm-crds")()).To(HaveLen(8))
		deleteAndWait(ctx, "olm-crds")
		Eventually(ownedCRDs(ctx, "olm-crds")).Should(BeEmpty())
		Eventually(bundlesOf(ctx, "olm-crds")).Should(BeEmpty())
	})

})

func condOf(bd *rukpakv1alpha1.BundleDeployment, t string) string {
	for _, c := range bd.Status.Conditions {
		if c.Type == t {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return "no " + t
}
