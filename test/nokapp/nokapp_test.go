// The no-kapp suite starts the adapter on a cluster without kapp-controller,
// as a user who installs rukpak-kapp first would, and then installs
// kapp-controller into the running cluster.
package nokapp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var env *harness.Env

func TestNoKapp(t *testing.T) {
	bdtest.RunSuite(t, "Without kapp-controller Suite", 2*time.Minute, 250*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	env, err = harness.Start(ctx, harness.Options{ControllerManager: true, FakeNodes: true, Adapter: true, Servers: true})
	Expect(err).NotTo(HaveOccurred())
	bdtest.Use(env)
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if env != nil {
		env.Stop()
	}
})

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
	It("runs the adapter unready, says on each BundleDeployment what is missing, and installs them once kapp-controller is installed", func(ctx context.Context) {
		pid := env.Adapter.Pid()
		for _, name := range []string{"before-kapp-1", "before-kapp-2"} {
			bdtest.PlainBD(ctx, name, configMapBundle(name))
			Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "False", "KappControllerMissing",
				"install kapp-controller v0.53.1 or newer, watching namespace "+harness.SystemNamespace))
		}
		Consistently(readyz).WithTimeout(2*time.Second).Should(Equal(http.StatusInternalServerError), "not ready without the App API")

		By("a Bundle on its own needs no kapp-controller: the adapter unpacks it itself")
		bdtest.StandaloneBundle(ctx, "before-kapp-bundle", rukpakv1alpha1.ClassPlain, bdtest.V1alpha1Image(configMapBundle("before-kapp-bundle")))
		Eventually(bdtest.GetBundle(ctx, "before-kapp-bundle")).WithTimeout(10 * time.Second).Should(
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseUnpacked, "True", "UnpackSuccessful", "Successfully unpacked the image Bundle"))

		By("kapp-controller's CRDs alone: the Apps are written, and one not picked up within the template timeout names the likely causes")
		Expect(env.InstallKappControllerAPI(ctx)).To(Succeed())
		for _, name := range []string{"before-kapp-1", "before-kapp-2"} {
			Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Unpacked", "False", "UnpackPending",
				"check that kapp-controller runs (v0.53.1 or newer), that it watches namespace "+harness.SystemNamespace))
		}

		By("kapp-controller itself, started in the running cluster")
		Expect(env.InstallKappController(ctx)).To(Succeed())
		for _, name := range []string{"before-kapp-1", "before-kapp-2"} {
			Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		}
		Eventually(readyz).Should(Equal(http.StatusOK))
		Expect(env.Adapter.Pid()).To(Equal(pid), "the adapter was not restarted")

		By("a BundleDeployment made afterwards installs as usual, and deleting one removes what it installed")
		bdtest.PlainBD(ctx, "after-kapp", configMapBundle("after-kapp"))
		Eventually(bdtest.GetBD(ctx, "after-kapp")).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		bdtest.DeleteAndWait(ctx, "before-kapp-1")
	})
})
