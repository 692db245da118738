package release_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

const systemNamespace = "rukpak-system"

// release is what one `make release` produced.
type release struct {
	version  string
	dir      string
	image    string
	manifest []byte
}

func makeRelease(ctx context.Context, version, platforms string) release {
	// Outlives the spec: later specs read the release's files.
	dir, err := os.MkdirTemp(env.Dir, "release-"+version+"-")
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := runMake(ctx, "release", "REGISTRY="+env.Registry.Host, "VERSION="+version, "PLATFORMS="+platforms, "RELEASE_DIR="+dir)
	manifest, err := os.ReadFile(filepath.Join(dir, "rukpak-kapp.yaml"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return release{version: version, dir: dir, image: lineAfter(out, "image: "), manifest: manifest}
}

// deployment is the release manifest's Deployment.
func (r release) deployment() *appsv1.Deployment {
	objs, err := harness.DecodeYAML(r.manifest)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, u := range objs {
		if u.GetKind() == "Deployment" {
			d := &appsv1.Deployment{}
			ExpectWithOffset(1, env.Scheme.Convert(u, d, nil)).To(Succeed())
			return d
		}
	}
	Fail("the release manifest has no Deployment")
	return nil
}

var _ = Describe("the release", Ordered, func() {
	var (
		first, second release
		pod           *harness.Pod
		hostPlatform  = "linux/" + runtime.GOARCH
	)

	AfterAll(func() {
		if pod != nil {
			pod.Stop(10 * time.Second)
		}
	})

	It("builds a reproducible, non-root, multi-arch image with no container runtime (make release, make image)", func(ctx context.Context) {
		first = makeRelease(ctx, "1.0.0", "linux/amd64,linux/arm64")
		Expect(first.image).To(HavePrefix(env.Registry.Host + "/rukpak-kapp@sha256:"))
		Expect(first.deployment().Spec.Template.Spec.Containers[0].Image).To(Equal(first.image), "the manifest pins the image it pushed")

		By("building the same commit again")
		again := runMake(ctx, "image", "REGISTRY="+env.Registry.Host, "VERSION=1.0.0", "PLATFORMS=linux/amd64,linux/arm64")
		Expect(strings.TrimSpace(lastLine(again))).To(Equal(first.image), "two builds of one commit give one digest")

		ref, err := name.ParseReference(first.image)
		Expect(err).NotTo(HaveOccurred())
		idx, err := remote.Index(ref, remote.WithContext(ctx))
		Expect(err).NotTo(HaveOccurred())
		im, err := idx.IndexManifest()
		Expect(err).NotTo(HaveOccurred())
		Expect(im.MediaType).To(Equal(types.OCIImageIndex))
		var platforms []string
		for _, m := range im.Manifests {
			platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
		}
		Expect(platforms).To(Equal([]string{"linux/amd64", "linux/arm64"}))
		revision := git(ctx, "rev-parse", "HEAD")
		Expect(im.Annotations).To(HaveKeyWithValue("org.opencontainers.image.revision", revision))
		Expect(im.Annotations).To(HaveKeyWithValue("org.opencontainers.image.version", "1.0.0"))
		Expect(im.Annotations).To(HaveKeyWithValue("org.opencontainers.image.source", "https://github.com/rukpak-kapp/rukpak-kapp"))

		img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
		Expect(err).NotTo(HaveOccurred())
		cf, err := img.ConfigFile()
		Expect(err).NotTo(HaveOccurred())
		Expect(cf.Config.User).To(Equal("65532:65532"), "numeric, so a kubelet can check runAsNonRoot")
		Expect(cf.Config.Entrypoint).To(Equal([]string{"/usr/local/bin/rukpak-kapp"}))
		commitTime := git(ctx, "log", "-1", "--format=%ct")
		Expect(strconv.FormatInt(cf.Created.Unix(), 10)).To(Equal(commitTime))

		By("listing every file: the binary, CA certificates and users, no shell")
		var files []string
		tr := tar.NewReader(mutate.Extract(img))
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(strconv.FormatInt(hdr.ModTime.Unix(), 10)).To(Equal(commitTime), "%s", hdr.Name)
			if hdr.Typeflag != tar.TypeDir {
				files = append(files, hdr.Name)
			}
		}
		Expect(files).To(ConsistOf("etc/group", "etc/passwd", "etc/ssl/certs/ca-certificates.crt", "usr/local/bin/rukpak-kapp"))
	})

	It("applies the release manifest server-side with no error and no warning", func(ctx context.Context) {
		Expect(applyServerSide(ctx, first.manifest)).To(BeEmpty())
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "rukpak-kapp"}, dep)).To(Succeed())
		Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(first.image))
		Expect(dep.Labels).To(HaveKeyWithValue("app.kubernetes.io/version", "1.0.0"))
		// The API server serves a new CRD's objects a moment after it says
		// Established (503 until then); wait until a create would pass.
		Eventually(func() error {
			return env.Client.Create(ctx, &rukpakv1alpha2.BundleDeployment{
				ObjectMeta: objectMeta("dry-run"),
				Spec: rukpakv1alpha2.BundleDeploymentSpec{
					InstallNamespace: "default", ProvisionerClassName: rukpakv1alpha2.ClassPlain,
					Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "example.com/dry-run:v1"}},
				},
			}, client.DryRunAll)
		}).Should(Succeed())
	})

	It("runs the image as the Deployment's pod says and reconciles BundleDeployments", func(ctx context.Context) {
		pod = startPod(ctx, "rukpak-kapp-1", first)
		waitReady(ctx, pod)
		// Ready serves before its CA is in the CRD, which the admission
		// policy then learns anew.
		Eventually(env.BundleDeploymentsAdmitted).Should(Succeed())

		By("installing a plain bundle from an image")
		ref, _, err := env.Registry.PushDir(filepath.Join(env.Root, "test", "testdata", "rukpak-bundles", "plain-v0", "valid"), "bundles/plain-v0:valid")
		Expect(err).NotTo(HaveOccurred())
		createPlainBD(ctx, "plain", ref)

		By("installing a chart over ssh git, which the adapter clones itself, writing known_hosts to /tmp")
		_, err = env.Git.NewRepo("chart", filepath.Join(env.Root, "examples", "charts", "hello-world"), "hello-world")
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "git-ssh", Namespace: systemNamespace},
			Type:       corev1.SecretTypeSSHAuth,
			Data:       map[string][]byte{"ssh-privatekey": env.SSHGit.ClientKey, "ssh-knownhosts": env.SSHGit.KnownHosts},
		})).To(Succeed())
		gitSource := &rukpakv1alpha2.GitSource{Repository: env.SSHGit.URL("chart"), Ref: rukpakv1alpha2.GitRef{Branch: "main"}}
		gitSource.Auth.Secret.Name = "git-ssh"
		Expect(env.Client.Create(ctx, &rukpakv1alpha2.BundleDeployment{
			ObjectMeta: objectMeta("helm-ssh"),
			Spec: rukpakv1alpha2.BundleDeploymentSpec{
				InstallNamespace: "default", ProvisionerClassName: rukpakv1alpha2.ClassHelm,
				Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeGit, Git: gitSource},
			},
		})).To(Succeed())

		for _, bd := range []string{"plain", "helm-ssh"} {
			Eventually(getBD(ctx, bd)).Should(WithTransform(installed, HavePrefix(installedOK)), "see %s", pod.LogPath)
		}
		Expect(metric(ctx, pod, "rukpak_kapp_bundledeployments")).To(ContainSubstring(`reason="InstallationSucceeded"`))
		exited, err := pod.Exited()
		Expect(exited).To(BeFalse(), "the pod exited: %v; see %s", err, pod.LogPath)
	})

	It("upgrades to the next release without rewriting any App", func(ctx context.Context) {
		second = makeRelease(ctx, "1.0.1", hostPlatform)
		Expect(second.image).NotTo(Equal(first.image), "the version is built into the binary")

		apps := &kappctrlv1alpha1.AppList{}
		Expect(env.Client.List(ctx, apps, client.InNamespace(systemNamespace))).To(Succeed())
		Expect(apps.Items).To(HaveLen(2))
		writes := watchAppWrites(ctx, apps)

		By("applying release 1.0.1 and rolling the pod over as a Deployment does: the new one starts, then the old one stops")
		Expect(applyServerSide(ctx, second.manifest)).To(BeEmpty())
		old := pod
		pod = startPod(ctx, "rukpak-kapp-2", second)
		waitReady(ctx, pod)
		old.Stop(30 * time.Second)
		Eventually(func() (string, error) {
			lease := &coordinationv1.Lease{}
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "rukpak-kapp.core.rukpak.io"}, lease)
			if err != nil || lease.Spec.HolderIdentity == nil {
				return "", err
			}
			return *lease.Spec.HolderIdentity, nil
		}).Should(HavePrefix("rukpak-kapp-2_"), "the new pod leads")
		Eventually(func() (float64, error) {
			return reconciles(ctx, pod)
		}).Should(BeNumerically(">=", 2), "the new pod reconciled every BundleDeployment")
		Consistently(func() []string { return writes.list() }, "5s").Should(BeEmpty(), "App writes after the upgrade")
		for _, bd := range []string{"plain", "helm-ssh"} {
			Expect(getBD(ctx, bd)()).To(WithTransform(installed, HavePrefix(installedOK)))
		}

		By("checking that the count would see a write")
		app := &apps.Items[0]
		Expect(env.Client.Patch(ctx, app, client.RawPatch(apitypes.MergePatchType, []byte(`{"metadata":{"annotations":{"test.rukpak.io/touched":"yes"}}}`)))).To(Succeed())
		Eventually(func() []string { return writes.list() }).Should(HaveLen(1))
	})

	It("passes rukpak-kapp check, and names a removed RBAC rule, a missing namespace binding and an unreachable webhook with their fixes", func(ctx context.Context) {
		bin, err := harness.GoBinary(ctx, env.Root, "./cmd/rukpak-kapp", filepath.Join(env.Dir, "rukpak-kapp-cli"))
		Expect(err).NotTo(HaveOccurred())
		routeWebhook(ctx, pod)
		// kube-apiserver's Service resolver learns the new EndpointSlice from
		// its informer, a moment after it is written.
		var out string
		Eventually(func() int {
			var code int
			out, code = check(ctx, bin, "-o", "json")
			return code
		}).WithTimeout(30*time.Second).Should(Equal(0), func() string { return out })
		var results []struct{ Name, Status, Message, Fix string }
		Expect(json.Unmarshal([]byte(out), &results)).To(Succeed())
		status := map[string]string{}
		for _, r := range results {
			status[r.Name] = r.Status
			Expect(r.Status).NotTo(Equal("fail"), "%+v", r)
		}
		for _, name := range []string{"kapp-controller API", "packaging API", "CRDs", "adapter", "adapter leader", "webhooks reachable",
			"conversion caBundle", "validating webhooks", "admission policy", "adapter RBAC", "namespace RBAC", "kapp-controller-config", "packaging global namespace", "rukpak", "BundleDeployments"} {
			Expect(status).To(HaveKeyWithValue(name, "ok"), out)
		}

		By("a rule of the adapter's ClusterRole removed")
		role := &rbacv1.ClusterRole{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "rukpak-kapp"}, role)).To(Succeed())
		kept := role.DeepCopy()
		role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "bundledeployments/status") })
		Expect(env.Client.Update(ctx, role)).To(Succeed())
		out = checkSays(ctx, bin, 1, `fail +adapter RBAC +system:serviceaccount:rukpak-system:rukpak-kapp may not: patch bundledeployments/status.core.rukpak.io`)
		Expect(out).To(ContainSubstring("fix: apply this release's config/rbac"))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "rukpak-kapp"}, role)).To(Succeed())
		role.Rules = kept.Rules
		Expect(env.Client.Update(ctx, role)).To(Succeed())

		By("a catalog's pull secret the adapter may not read, then the binding docs/catalogs.md names")
		Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "check-catalogs"}})).To(Succeed())
		catalog := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "catalogs.rukpak-kapp.dev/v1alpha1", "kind": "OperatorCatalog",
			"metadata": map[string]any{"namespace": "check-catalogs", "name": "private"},
			"spec":     map[string]any{"image": "registry.invalid/catalog:1", "pullSecret": "creds"},
		}}
		Expect(env.Client.Create(ctx, catalog)).To(Succeed())
		out = checkSays(ctx, bin, 1, `fail +namespace RBAC +the adapter may not do what it needs in catalog check-catalogs/private's pull secret creds: get secrets named creds in check-catalogs`)
		Expect(out).To(ContainSubstring("fix: kubectl create rolebinding rukpak-kapp-catalog-pull-secrets -n check-catalogs --clusterrole rukpak-kapp-catalog-pull-secrets --serviceaccount rukpak-system:rukpak-kapp"))
		// What that command makes.
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "check-catalogs", Name: "rukpak-kapp-catalog-pull-secrets"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "rukpak-kapp-catalog-pull-secrets"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: systemNamespace, Name: "rukpak-kapp"}}}
		Expect(env.Client.Create(ctx, binding)).To(Succeed())
		checkSays(ctx, bin, 0, `ok +namespace RBAC +the adapter may do what it needs in 0 app namespace\(s\) and may read 1 catalog pull secret\(s\); catalogs in check-catalogs install no dependencies: kubectl create rolebinding rukpak-kapp-catalog-dependencies -n check-catalogs`)

		By("an app namespace the adapter's Deployment names, before and after config/sharding's objects for it")
		// The Deployment's controller writes its status alongside: Edit reads again on a conflict.
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: systemNamespace, Name: "rukpak-kapp"}}
		var unshardedArgs []string
		Expect(harness.Edit(ctx, env.Client, dep, func(dep *appsv1.Deployment) {
			unshardedArgs = slices.Clone(dep.Spec.Template.Spec.Containers[0].Args)
			dep.Spec.Template.Spec.Containers[0].Args = append(dep.Spec.Template.Spec.Containers[0].Args, "--app-namespaces=rukpak-apps-0")
		})).To(Succeed())
		// Its other lines may say the Deployment rolls: only this one is read.
		out = checkSays(ctx, bin, anyCode, `fail +namespace RBAC +the adapter may not do what it needs in app namespace rukpak-apps-0: create apps.kappctrl.k14s.io in rukpak-apps-0`)
		Expect(out).To(ContainSubstring("fix: apply config/sharding/app-namespaces' Role rukpak-kapp and its RoleBinding to rukpak-system:rukpak-kapp in rukpak-apps-0"))
		shard, err := os.ReadFile(filepath.Join(env.Root, "config/sharding/app-namespaces/rukpak-apps-0.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(applyServerSide(ctx, shard)).To(BeEmpty())
		checkSays(ctx, bin, anyCode, `ok +namespace RBAC +the adapter may do what it needs in 1 app namespace\(s\) and may read 1 catalog pull secret\(s\)`)
		Expect(harness.Edit(ctx, env.Client, dep, func(dep *appsv1.Deployment) {
			dep.Spec.Template.Spec.Containers[0].Args = unshardedArgs
		})).To(Succeed())
		Expect(env.Client.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "rukpak-kapp-installer-rukpak-apps-0"}})).To(Succeed())
		Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rukpak-apps-0"}})).To(Succeed())
		Expect(env.Client.Delete(ctx, catalog)).To(Succeed())
		Expect(env.Client.Delete(ctx, binding)).To(Succeed())

		By("a kapp-controller-config the adapter cannot follow")
		config := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: harness.KappControllerNamespace, Name: "kapp-controller-config"},
			StringData: map[string]string{"caCerts": "not a certificate"}}
		Expect(env.Client.Create(ctx, config)).To(Succeed())
		out, code := check(ctx, bin)
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`fail +kapp-controller-config +the Secret kapp-controller/kapp-controller-config, which the adapter's fetches follow as kapp-controller's do, cannot be used: caCerts holds no PEM certificate: every fetch the adapter makes fails until it is fixed`))
		Expect(out).To(ContainSubstring("fix: fix it: caCerts holds PEM certificates"))
		Expect(env.Client.Delete(ctx, config)).To(Succeed())

		By("the adapter's webhooks unreachable: its only pod stopped")
		pod.Stop(30 * time.Second)
		out, code = check(ctx, bin)
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`fail +webhooks reachable +the API server cannot call the adapter's webhooks`))
		Expect(out).To(ContainSubstring("fix: the webhooks are served by every adapter replica through the Service rukpak-system/rukpak-kapp-webhook"))
		pod = startPod(ctx, "rukpak-kapp-3", second)
		waitReady(ctx, pod)
		routeWebhook(ctx, pod)
		Eventually(func() int {
			_, code := check(ctx, bin)
			return code
		}).WithTimeout(time.Minute).Should(Equal(0), "healthy again")
	})

	It("works as `make run CLUSTER=kubeconfig` against a cluster with config/local applied", func(ctx context.Context) {
		pod.Stop(30 * time.Second)
		pod = nil
		local, err := env.Kustomize(ctx, "config/local")
		Expect(err).NotTo(HaveOccurred())
		Expect(applyServerSide(ctx, local)).To(BeEmpty())

		cmd := exec.Command("make", "-s", "run", "CLUSTER=kubeconfig", "ARGS=--metrics-bind-address=0 --health-probe-bind-address=0")
		cmd.Dir = env.Root
		cmd.Env = append(os.Environ(), "KUBECONFIG="+env.ControlPlane.Kubeconfig)
		logPath := filepath.Join(env.LogDir(), "make-run.log")
		logFile, err := os.Create(logPath)
		Expect(err).NotTo(HaveOccurred())
		defer logFile.Close()
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		Expect(cmd.Start()).To(Succeed())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		DeferCleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		})

		ref, _, err := env.Registry.PushDir(filepath.Join(env.Root, "examples", "bundles", "plain-hello"), "examples/plain-hello:v1")
		Expect(err).NotTo(HaveOccurred())
		createPlainBD(ctx, "plain-hello", ref)
		Eventually(getBD(ctx, "plain-hello"), 3*time.Minute).Should(WithTransform(installed, HavePrefix(installedOK)), "see %s", logPath)
	})

	It("installs as a Carvel package from its repository through kapp-controller", func(ctx context.Context) {
		const ns = "rukpak-packages"
		Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: objectMeta(ns)})).To(Succeed())
		repo, err := os.ReadFile(filepath.Join(second.dir, "package-repository.yaml"))
		Expect(err).NotTo(HaveOccurred())
		objs, err := harness.DecodeYAML(repo)
		Expect(err).NotTo(HaveOccurred())
		Expect(objs).To(HaveLen(1))
		objs[0].SetNamespace(ns)
		Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(objs[0]), client.FieldOwner("kubectl"))).To(Succeed())
		Eventually(reconciled(ctx, "PackageRepository", ns, "rukpak-kapp")).Should(Succeed())
		pkg := carvelObject("data.packaging.carvel.dev/v1alpha1", "Package")
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rukpak-kapp.core.rukpak.io.1.0.1"}, pkg)).To(Succeed())

		By("installing it as `kctrl package install -p rukpak-kapp.core.rukpak.io --version 1.0.1 --values-file` does")
		installPackage(ctx, ns, "1.0.1", `{systemNamespace: rukpak-pkg, classes: [pkg-plain=core-rukpak-io-plain], templateTimeout: 30s}`)
		Eventually(reconciled(ctx, "PackageInstall", ns, "rukpak-kapp"), 3*time.Minute).Should(Succeed())
		available, err := harness.KctrlAvailableVersions(ctx, env.ControlPlane.Config, ns, "rukpak-kapp.core.rukpak.io")
		Expect(err).NotTo(HaveOccurred())
		Expect(available).To(ContainElement(HaveField("Version", "1.0.1")), "kctrl package available list -p rukpak-kapp.core.rukpak.io")
		installed, err := harness.KctrlInstalledList(ctx, env.ControlPlane.Config, ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(installed).To(ConsistOf(And(HaveField("Name", "rukpak-kapp"), HaveField("PackageVersion", "1.0.1"), HaveField("Status", "Reconcile succeeded"))), "kctrl package installed list")

		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "rukpak-pkg", Name: "rukpak-kapp"}, dep)).To(Succeed())
		Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(second.image))
		Expect(dep.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--system-namespace=rukpak-pkg", "--classes=pkg-plain=core-rukpak-io-plain", "--template-timeout=30s", "--app-sync-period=10m"))
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "rukpak-pkg", Name: "rukpak-kapp"}, &rbacv1.Role{})).To(Succeed())
		binding := &rbacv1.ClusterRoleBinding{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "rukpak-kapp"}, binding)).To(Succeed())
		Expect(binding.Subjects).To(ConsistOf(HaveField("Namespace", "rukpak-pkg")))
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "bundledeployments.core.rukpak.io"}, crd)).To(Succeed())
		Expect(crd.Labels).To(HaveKey("kapp.k14s.io/app"), "kapp owns the CRD now")
		policy := &admissionregistrationv1.MutatingAdmissionPolicy{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "rukpak-kapp-uninstall-finalizer"}, policy)).To(Succeed())
		Expect(policy.Spec.MatchConditions[0].Expression).To(HaveSuffix("in ['pkg-plain']"))
	})
})

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func git(ctx context.Context, args ...string) string {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = env.Root
	out, err := cmd.Output()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return strings.TrimSpace(string(out))
}

// routeWebhook points the adapter's webhook Service at pod's webhook
// port, forwarded on this machine (the fake nodes' pods have no address
// this machine reaches).
func routeWebhook(ctx context.Context, pod *harness.Pod) {
	ip, port, err := pod.ServeOnHost(9443)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, env.RouteToHost(ctx, systemNamespace, harness.AdapterWebhookService, "webhook", ip, port)).To(Succeed())
}

// anyCode is checkSays's word for an exit code it does not look at.
const anyCode = -1

// checkSays runs check until it exits with code and its output matches
// pattern, and returns that output: an RBAC change reaches
// kube-apiserver's authorizer from its informer, a moment after it is
// written, and a SubjectAccessReview asked before then answers as before.
func checkSays(ctx context.Context, bin string, code int, pattern string) string {
	want := regexp.MustCompile(pattern)
	var out string
	EventuallyWithOffset(1, func() bool {
		var got int
		out, got = check(ctx, bin)
		return (code == anyCode || got == code) && want.MatchString(out)
	}).WithTimeout(30*time.Second).Should(BeTrue(), func() string { return fmt.Sprintf("want exit %d and %q; last output:\n%s", code, pattern, out) })
	return out
}

// check runs `rukpak-kapp check` against the local control plane and
// returns its output and exit code.
func check(ctx context.Context, bin string, args ...string) (string, int) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"check", "--kubeconfig", env.ControlPlane.Kubeconfig}, args...)...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(out))
	return string(out), 0
}

// startPod runs the release's Deployment's pod from its image, reaching
// the servers its BundleDeployments' sources live on.
func startPod(ctx context.Context, name string, r release) *harness.Pod {
	dep := &appsv1.Deployment{}
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "rukpak-kapp"}, dep)).To(Succeed())
	ExpectWithOffset(1, dep.Spec.Template.Spec.Containers[0].Image).To(Equal(r.image), "the applied Deployment runs the release's image")
	p, err := env.StartPod(ctx, harness.PodOptions{Name: name, Namespace: systemNamespace, Spec: dep.Spec.Template.Spec, Reach: []string{env.SSHGit.Host}})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return p
}

// waitReady probes the pod as its readiness and liveness probes say.
func waitReady(ctx context.Context, p *harness.Pod) {
	c := p.HTTPClient()
	for _, path := range []string{"/readyz", "/healthz"} {
		EventuallyWithOffset(1, func() (int, error) {
			if exited, err := p.Exited(); exited {
				StopTrying(fmt.Sprintf("the pod exited (%v); see %s", err, p.LogPath)).Now()
			}
			resp, err := c.Get("http://127.0.0.1:8081" + path)
			if err != nil {
				return 0, err
			}
			resp.Body.Close()
			return resp.StatusCode, nil
		}, time.Minute).Should(Equal(http.StatusOK), "probe %s", path)
	}
}

func metric(ctx context.Context, p *harness.Pod, prefix string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:8080/metrics", nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	resp, err := p.HTTPClient().Do(req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var lines []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, prefix) {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

// reconciles is the pod's count of BundleDeployment reconciles.
func reconciles(ctx context.Context, p *harness.Pod) (float64, error) {
	var total float64
	for _, line := range strings.Split(metric(ctx, p, "controller_runtime_reconcile_total"), "\n") {
		if !strings.Contains(line, `controller="bundledeployment"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, nil
}

// appWrites records every change to the Apps other than their status
// (which kapp-controller writes): spec, labels, annotations, owners,
// finalizers.
type appWrites struct{ ch chan string }

func (w *appWrites) list() []string {
	var out []string
	for {
		select {
		case s := <-w.ch:
			out = append(out, s)
		default:
			return out
		}
	}
}

func watchAppWrites(ctx context.Context, apps *kappctrlv1alpha1.AppList) *appWrites {
	last := map[string]*kappctrlv1alpha1.App{}
	for i := range apps.Items {
		last[apps.Items[i].Name] = apps.Items[i].DeepCopy()
	}
	wc, err := client.NewWithWatch(env.ControlPlane.Config, client.Options{Scheme: env.Scheme})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	DeferCleanup(cancel)
	w, err := wc.Watch(ctx, &kappctrlv1alpha1.AppList{}, client.InNamespace(systemNamespace), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: apps.ResourceVersion}})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := &appWrites{ch: make(chan string, 100)}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			app, ok := ev.Object.(*kappctrlv1alpha1.App)
			if !ok {
				continue
			}
			prev := last[app.Name]
			last[app.Name] = app.DeepCopy()
			if ev.Type != watch.Modified || prev == nil {
				out.ch <- fmt.Sprintf("%s %s", ev.Type, app.Name)
				continue
			}
			if app.Generation != prev.Generation || !equality.Semantic.DeepEqual(app.Labels, prev.Labels) ||
				!equality.Semantic.DeepEqual(app.Annotations, prev.Annotations) || !equality.Semantic.DeepEqual(app.OwnerReferences, prev.OwnerReferences) ||
				!equality.Semantic.DeepEqual(app.Finalizers, prev.Finalizers) {
				out.ch <- fmt.Sprintf("modified %s (generation %d → %d)", app.Name, prev.Generation, app.Generation)
			}
		}
	}()
	return out
}

func carvelObject(apiVersion, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

// reconciled succeeds once a PackageRepository's or PackageInstall's
// generation is reconciled, and stops trying at a failure
// (harness.Reconciled).
func reconciled(ctx context.Context, kind, ns, name string) func() error {
	return func() error {
		u := carvelObject("packaging.carvel.dev/v1alpha1", kind)
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return err
		}
		st := kappctrlv1alpha1.GenericStatus{}
		if raw, ok := u.Object["status"].(map[string]any); ok {
			if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
				return fmt.Errorf("%s %s's status: %w", kind, name, err)
			}
		}
		done, err := harness.Reconciled(u.GetGeneration(), st)
		if err != nil {
			StopTrying(fmt.Sprintf("%s %s failed: %v", kind, name, err)).Now()
		}
		if !done {
			return fmt.Errorf("%s %s at generation %d: %+v", kind, name, u.GetGeneration(), st)
		}
		return nil
	}
}

// installPackage makes what kctrl package install makes: a ServiceAccount
// that may install anything, a Secret with the values file, and the
// PackageInstall. (kctrl is not built here: the module proxy does not serve
// kapp-controller's cli module; harness.Kctrl* make its list calls.)
func installPackage(ctx context.Context, ns, version, values string) {
	objs, err := harness.DecodeYAML([]byte(fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: rukpak-kapp-%[1]s-sa, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: rukpak-kapp-%[1]s-cluster-role}
rules:
- {apiGroups: ["*"], resources: ["*"], verbs: ["*"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: rukpak-kapp-%[1]s-cluster-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rukpak-kapp-%[1]s-cluster-role}
subjects:
- {kind: ServiceAccount, name: rukpak-kapp-%[1]s-sa, namespace: %[1]s}
---
apiVersion: v1
kind: Secret
metadata: {name: rukpak-kapp-%[1]s-values, namespace: %[1]s}
stringData:
  values.yml: '%[3]s'
---
apiVersion: packaging.carvel.dev/v1alpha1
kind: PackageInstall
metadata: {name: rukpak-kapp, namespace: %[1]s}
spec:
  serviceAccountName: rukpak-kapp-%[1]s-sa
  packageRef:
    refName: rukpak-kapp.core.rukpak.io
    versionSelection: {constraints: "%[2]s"}
  values:
  - secretRef: {name: rukpak-kapp-%[1]s-values}
`, ns, version, values)))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, u := range objs {
		ExpectWithOffset(1, env.Client.Create(ctx, u)).To(Succeed(), "create %s %s", u.GetKind(), u.GetName())
	}
}

// createPlainBD creates a plain BundleDeployment of the image ref.
func createPlainBD(ctx context.Context, name, ref string) {
	ExpectWithOffset(1, env.Client.Create(ctx, &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: objectMeta(name),
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			InstallNamespace: "default", ProvisionerClassName: rukpakv1alpha2.ClassPlain,
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}},
		},
	})).To(Succeed())
}
