// The no-kapp suite starts the adapter on a cluster without kapp-controller,
// as a user who installs rukpak-kapp first would, and then installs
// kapp-controller into the running cluster.
package nokapp_test

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var env *harness.Env

// appNamespaces are config/sharding's: the adapter spreads Apps over
// them, so that the API it lacks is first looked for where an App may
// already be.
var appNamespaces = []string{"rukpak-apps-0", "rukpak-apps-1"}

func TestNoKapp(t *testing.T) {
	bdtest.RunSuite(t, "Without kapp-controller Suite", 2*time.Minute, 250*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	env, err = harness.Start(ctx, harness.Options{ControllerManager: true, FakeNodes: true, Adapter: true, Servers: true,
		AdapterArgs: []string{"--app-namespaces", strings.Join(appNamespaces, ",")}})
	Expect(err).NotTo(HaveOccurred())
	bdtest.Use(env)
	rendered, err := env.Kustomize(ctx, "config/sharding/app-namespaces")
	Expect(err).NotTo(HaveOccurred())
	_, err = harness.ApplyYAML(ctx, env.Client, rendered)
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if env != nil {
		env.Stop()
	}
})

// check runs `rukpak-kapp check` against the local control plane and
// returns its output and exit code.
func check(ctx context.Context, bin string) (string, int) {
	cmd := exec.CommandContext(ctx, bin, "check", "--kubeconfig", env.ControlPlane.Kubeconfig)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(out))
	return string(out), 0
}

// configMapBundle is a plain bundle of one ConfigMap named name.
func configMapBundle(name string) string {
	return bdtest.DirBundle(name, map[string]string{
		"manifests/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata: {a: b}\n",
	})
}

func readyz() (int, error) {
	resp, err := (&http.Client{Timeout: time.Second}).Get(env.Adapter.ReadyURL)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}

var _ = Describe("a cluster without kapp-controller", func() {
	It("runs the adapter unready, with its Apps spread over app namespaces, says on each BundleDeployment what is missing, and installs them once kapp-controller is installed", func(ctx context.Context) {
		pid := env.Adapter.Pid()
		for _, name := range []string{"before-kapp-1", "before-kapp-2"} {
			bdtest.PlainBD(ctx, name, configMapBundle(name))
			Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "False", "KappControllerMissing",
				"install kapp-controller v0.53.1 or newer, watching namespace "+strings.Join(append([]string{harness.SystemNamespace}, appNamespaces...), ", ")))
		}
		Consistently(readyz).WithTimeout(2*time.Second).Should(Equal(http.StatusInternalServerError), "not ready without the App API")

		By("rukpak-kapp check names what is missing, with its fix, and exits 1")
		bin, err := harness.GoBinary(ctx, env.Root, "./cmd/rukpak-kapp", filepath.Join(env.Dir, "rukpak-kapp"))
		Expect(err).NotTo(HaveOccurred())
		out, code := check(ctx, bin)
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`fail +kapp-controller API +kapp-controller's API \(kappctrl.k14s.io/v1alpha1 Apps\) is not served`))
		Expect(out).To(ContainSubstring("fix: install kapp-controller v0.53.1 or newer"))
		Expect(out).To(MatchRegexp(`warn +packaging API +kapp-controller's packaging API`))
		Expect(out).To(MatchRegexp(`warn +BundleDeployments +0 of 2 installed; not installed: 2 KappControllerMissing`))

		By("rukpak-kapp check: a packaging API that is registered but not served")
		apiService := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": "v1alpha1.data.packaging.carvel.dev"},
			"spec": map[string]any{"group": "data.packaging.carvel.dev", "version": "v1alpha1", "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
				"insecureSkipTLSVerify": true, "service": map[string]any{"namespace": "kapp-controller", "name": "packaging-api"}},
		}}
		Expect(env.Client.Create(ctx, apiService)).To(Succeed())
		Eventually(func() string {
			out, _ := check(ctx, bin)
			return out
		}).Should(MatchRegexp(`fail +packaging API +v1alpha1.data.packaging.carvel.dev is not available \(ServiceNotFound`))
		Expect(env.Client.Delete(ctx, apiService)).To(Succeed())

		By("a Bundle on its own needs no kapp-controller: the adapter unpacks it itself")
		bdtest.StandaloneBundle(ctx, "before-kapp-bundle", rukpakv1alpha1.ClassPlain, bdtest.V1alpha1Image(configMapBundle("before-kapp-bundle")))
		Eventually(bdtest.GetBundle(ctx, "before-kapp-bundle")).WithTimeout(10 * time.Second).Should(
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseUnpacked, "True", "UnpackSuccessful", "Successfully unpacked the image Bundle"))

		By("kapp-controller's CRDs alone: the Apps are written, and one not picked up within the template timeout names the likely causes")
		Expect(env.InstallKappControllerAPI(ctx)).To(Succeed())
		for _, name := range []string{"before-kapp-1", "before-kapp-2"} {
			Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Unpacked", "False", "UnpackPending",
				"check that kapp-controller runs (v0.53.1 or newer), that it watches namespace "+
					translate.Placement(translate.Config{SystemNamespace: harness.SystemNamespace, AppNamespaces: appNamespaces}, name)))
		}

		By("kapp-controller itself, started in the running cluster")
		Expect(env.InstallKappController(ctx)).To(Succeed())
		for _, name := range []string{"before-kapp-1", "before-kapp-2"} {
			Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		}
		Eventually(readyz).Should(Equal(http.StatusOK))
		Expect(env.Adapter.Pid()).To(Equal(pid), "the adapter was not restarted")
		out, _ = check(ctx, bin)
		Expect(out).To(MatchRegexp(`ok +kapp-controller API +served`))

		By("a BundleDeployment made afterwards installs as usual, and deleting one removes what it installed")
		bdtest.PlainBD(ctx, "after-kapp", configMapBundle("after-kapp"))
		Eventually(bdtest.GetBD(ctx, "after-kapp")).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		bdtest.DeleteAndWait(ctx, "before-kapp-1")
	})
})
