package packaging_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/upgradeplan"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// A catalog of aws-efs-operator 0.0.8 from the registry+v1 corpus, channel
// stable 1.0.0 ← 1.1.0 ← 1.2.0 ← 2.0.0 by replaces, where 1.1.0 gains a
// cluster RBAC rule, 1.2.0's bundle drops a field of its CRD's schema and
// 2.0.0 runs another operator image: the plan of the upgrade names each,
// and the walk from 1.0.0 to 2.0.0 stops where the plan said, refused by CRD
// upgrade safety, with 1.1.0 running.
var _ = Describe("walking a channel", func() {
	It("plans the upgrade hop by hop, then stops at the step CRD upgrade safety refuses, as planned, with the step before it installed and every object kept", func(ctx context.Context) {
		const ns, install, installNS = "catalog-walk", "efs", "catalog-efs-op"
		bdName := install + "." + ns
		createNamespace(ctx, ns)

		By("pushing the bundles (1.2.0's CRD without status.message) and the catalog as a package repository")
		installEfs(ctx, ns, install, installNS, pushWalkCatalog(ctx, "walk", "1.2.0"))
		deployment := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: installNS, Name: "aws-efs-operator"}, deployment)).To(Succeed())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: efsCRD}, crd)).To(Succeed())
		uids := []string{string(deployment.UID), string(crd.UID)}

		By("rukpak-kapp upgrade plan efs -n " + ns + " --to 2.0.0 -o json: three hops, 1.1.0's RBAC rule, 1.2.0 refused, 2.0.0's image")
		plan := upgradePlan(ctx, ns, install, "--to", "2.0.0")
		Expect(plan.Path).To(Equal([]string{"1.0.0", "1.1.0", "1.2.0", "2.0.0"}))
		Expect(plan.Hops).To(HaveLen(3))
		Expect(plan.Hops[0].ClusterRules.Gained).To(Equal([]string{"get,list batch/jobs"}))
		Expect(plan.Hops[0].CRDs).To(BeEmpty(), "1.1.0 changes no CRD")
		Expect(plan.Hops[0].Refused()).To(BeFalse())
		Expect(plan.Hops[1].CRDs).To(HaveLen(1))
		refused := plan.Hops[1].CRDs[0]
		Expect(refused.Name).To(Equal(efsCRD))
		Expect(refused.Change).To(Equal("changed"))
		Expect(refused.Allowed).To(BeFalse())
		Expect(refused.Verdict).To(ContainSubstring("failed to validate safety of UPDATE for CRD \"" + efsCRD + "\""))
		Expect(plan.Hops[2].Images.Added).To(Equal([]string{"quay.io/app-sre/aws-efs-operator:v2"}))
		Expect(plan.Hops[2].Images.Removed).To(Equal([]string{"quay.io/app-sre/aws-efs-operator:9c87267"}))
		Expect(plan.Hops[2].InstallModes).To(ContainElement("AllNamespaces"))
		By("rukpak-kapp upgrade plan efs -n " + ns + " (text): the same, and exit status 1")
		text, err := exec.CommandContext(ctx, rukpakKapp, "upgrade", "plan", install, "-n", ns, "--to", "2.0.0", "--kubeconfig", env.ControlPlane.Kubeconfig).Output()
		Expect(err).To(HaveOccurred(), "a refused hop exits 1: %s", text)
		Expect(string(text)).To(And(ContainSubstring("path to 2.0.0: 1.0.0 → 1.1.0 → 1.2.0 → 2.0.0"),
			ContainSubstring("hop 2 of 3: 1.1.0 → 1.2.0"), ContainSubstring("REFUSED by the CRD upgrade safety check"),
			ContainSubstring("cluster RBAC gained: get,list batch/jobs")))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, &rukpakv1alpha2.BundleDeployment{})).To(Succeed())

		By("kctrl package installed update -i efs --version 2.0.0: the walk installs 1.1.0, then stops at 1.2.0, as planned")
		err = kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, "2.0.0")
		})
		Expect(err).To(HaveOccurred(), "kctrl reports the stopped walk")
		oi := operatorInstall(ctx, ns, install)
		Expect(oi.Spec.Version).To(Equal("2.0.0"), "the generation asks for 2.0.0")
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v1.2.0"), "the BundleDeployment stays at the refused step")
		installed := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled)
		Expect(installed).NotTo(BeNil())
		Expect(installed.Status).To(BeEquivalentTo("False"))
		Expect(installed.ObservedGeneration).To(Equal(oi.Generation))
		Expect(installed.Reason).To(Equal(catalogsv1alpha1.ReasonUpgradeFailed))
		Expect(oi.Status.Installed).To(HaveField("Version", "1.1.0"))
		Expect(installed.Message).To(And(
			ContainSubstring("The upgrade along channel stable (1.0.0 → 1.1.0 → 1.2.0 → 2.0.0) stopped at 1.2.0; 1.1.0 stays installed"),
			ContainSubstring("failed to validate safety of UPDATE for CRD \""+efsCRD+"\"")))
		// The plan's verdict is the refusal the adapter then met, word for
		// word (kapp wraps the long lines it quotes).
		_, planned, _ := strings.Cut(strings.Join(strings.Fields(refused.Verdict), " "), "): ")
		Expect(planned).NotTo(BeEmpty())
		Expect(strings.Join(strings.Fields(installed.Message), " ")).To(ContainSubstring(planned), "the plan said what the walk met")
		progressing := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeProgressing)
		Expect(progressing).NotTo(BeNil())
		Expect(progressing.Status).To(BeEquivalentTo("False"))
		Expect(progressing.Reason).To(Equal(catalogsv1alpha1.ReasonUpgradeStopped))
		Eventually(upgradeSteps).WithContext(ctx).WithArguments(ns, install).Should(Equal([]string{
			"Upgrading along channel stable (1.0.0 → 1.1.0 → 1.2.0 → 2.0.0): installing 1.1.0, step 1 of 3",
			"Upgrading along channel stable (1.0.0 → 1.1.0 → 1.2.0 → 2.0.0): installing 1.2.0, step 2 of 3",
		}), "the walk went no further than the refused step")

		By("what 1.1.0 installed runs on: the CRD keeps its field, nothing was recreated")
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: efsCRD}, crd)).To(Succeed())
		Expect(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties).To(HaveKey("message"))
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: installNS, Name: "aws-efs-operator"}, deployment)).To(Succeed())
		Expect([]string{string(deployment.UID), string(crd.UID)}).To(Equal(uids))
	}, SpecTimeout(6*time.Minute))
})

// installEfs adds the package repository pinned in namespace ns and
// installs aws-efs-operator 1.0.0 from it as PackageInstall install, into
// installNS, through the calls kctrl makes; when the spec ends it is
// uninstalled and its CRD waited for until gone.
func installEfs(ctx context.Context, ns, install, installNS, pinned string) {
	ref := "stable.aws-efs-operator." + catalog.DefaultDomain
	catalogsAPI(ctx)
	By("kctrl package repository add -r efs --url " + pinned)
	ExpectWithOffset(1, harness.KctrlRepositoryAdd(ctx, env.ControlPlane.Config, ns, "efs", pinned)).To(Succeed())
	By("kctrl package install -i " + install + " -p " + ref + " --version 1.0.0")
	DeferCleanup(func(ctx context.Context) {
		Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, install)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: efsCRD}, &apiextensionsv1.CustomResourceDefinition{}))
		}).WithContext(ctx).Should(BeTrue(), "the CRD goes with the OperatorInstall's BundleDeployment")
	})
	ExpectWithOffset(1, kctrl(ctx, func(ctx context.Context) error {
		return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: install, Package: ref, Version: "1.0.0",
			Values: []byte("installNamespace: " + installNS + "\n")})
	})).To(Succeed())
}

// upgradePlan runs rukpak-kapp upgrade plan for the PackageInstall ns/name
// as a user would, and reads its JSON (the exit status is the caller's: 1
// when a hop is refused).
func upgradePlan(ctx context.Context, ns, name string, args ...string) *upgradeplan.Plan {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, rukpakKapp, append([]string{"upgrade", "plan", name, "-n", ns, "-o", "json", "--kubeconfig", env.ControlPlane.Kubeconfig}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	plan := &upgradeplan.Plan{}
	Expect(json.Unmarshal(out, plan)).To(Succeed(), "upgrade plan: %s\n%s", out, stderr.String())
	return plan
}

// efsCRD is aws-efs-operator's CRD.
const efsCRD = "sharedvolumes.aws-efs.managed.openshift.io"

// pushWalkCatalog pushes aws-efs-operator 0.0.8's bundle under repo as
// versions 1.0.0, 1.1.0, 1.2.0 and 2.0.0 (and the later versions given,
// each replacing the one before), the one of them named unsafe ("" none)
// with a field of its CRD removed, then the catalog of channel stable as a
// package repository; it returns the repository's pinned reference.
func pushWalkCatalog(ctx context.Context, repo, unsafeAt string, later ...string) string {
	return pushWalkCatalogWith(ctx, repo, unsafeAt, nil, later...)
}

// pushWalkCatalogWith is pushWalkCatalog with extra manifests in the
// bundles of some versions: extra[version][file] is a file's content.
func pushWalkCatalogWith(ctx context.Context, repo, unsafeAt string, extra map[string]map[string]string, later ...string) string {
	bundle := filepath.Join(env.Root, "test", "testdata", "registry-v1-corpus", "aws-efs-operator", "0.0.8")
	unsafe := GinkgoT().TempDir()
	Expect(os.CopyFS(unsafe, os.DirFS(bundle))).To(Succeed())
	crdFile := filepath.Join(unsafe, "manifests", "aws-efs.managed.openshift.io_sharedvolumes_crd.yaml")
	data, err := os.ReadFile(crdFile)
	Expect(err).NotTo(HaveOccurred())
	crd := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal(data, &crd.Object)).To(Succeed())
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	v0 := versions[0].(map[string]any)
	unstructured.RemoveNestedField(v0, "schema", "openAPIV3Schema", "properties", "status", "properties", "message")
	Expect(unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")).To(Succeed())
	data, err = yaml.Marshal(crd.Object)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(crdFile, data, 0o644)).To(Succeed())

	const pkg = "aws-efs-operator"
	cfg := declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: pkg, DefaultChannel: "stable"}},
		Channels: []declcfg.Channel{{Schema: declcfg.SchemaChannel, Package: pkg, Name: "stable"}},
	}
	previous := ""
	// From 1.1.0 on the operator may also read Jobs: a cluster rule an
	// upgrade plan shows gained.
	const jobsRule = "          rules:\n            - apiGroups:\n                - batch\n              resources:\n                - jobs\n              verbs:\n                - get\n                - list\n"
	for _, v := range append([]string{"1.0.0", "1.1.0", "1.2.0", "2.0.0"}, later...) {
		// Each version is its own image, its CSV naming its version, as a
		// real catalog's bundles are: a move is a change of the image.
		dir := GinkgoT().TempDir()
		from := bundle
		if v == unsafeAt {
			from = unsafe
		}
		Expect(os.CopyFS(dir, os.DirFS(from))).To(Succeed())
		csvFile := filepath.Join(dir, "manifests", "aws-efs-operator.v0.0.8.clusterserviceversion.yaml")
		csv, err := os.ReadFile(csvFile)
		Expect(err).NotTo(HaveOccurred())
		edits := []string{"name: aws-efs-operator.v0.0.8", "name: aws-efs-operator.v" + v, "\n  version: 0.0.8", "\n  version: " + v}
		if v != "1.0.0" {
			edits = append(edits, "          rules:\n", jobsRule)
		}
		if strings.HasPrefix(v, "2.") {
			edits = append(edits, "quay.io/app-sre/aws-efs-operator:9c87267", "quay.io/app-sre/aws-efs-operator:v2")
		}
		Expect(os.WriteFile(csvFile, []byte(strings.NewReplacer(edits...).Replace(string(csv))), 0o644)).To(Succeed())
		for file, content := range extra[v] {
			Expect(os.WriteFile(filepath.Join(dir, "manifests", file), []byte(content), 0o644)).To(Succeed())
		}
		image, _, err := env.Registry.PushDir(dir, repo+"/aws-efs-operator:v"+v)
		Expect(err).NotTo(HaveOccurred())
		name := pkg + ".v" + v
		cfg.Channels[0].Entries = append(cfg.Channels[0].Entries, declcfg.ChannelEntry{Name: name, Replaces: previous})
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: name, Package: pkg, Image: image,
			Properties: []property.Property{property.MustBuildPackage(pkg, v)}})
		previous = name
	}
	// The corpus operators' own images are on registries this machine
	// cannot reach: only the bundles are locked (the air-gap suite locks
	// both).
	pinned, _ := pushCatalog(ctx, cfg, env.Registry.Host+"/"+repo+"/repository", "--operator-images=false")
	return pinned
}
