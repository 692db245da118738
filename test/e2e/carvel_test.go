package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// renderBD runs `rukpak-kapp render` on bd and decodes what it printed.
func renderBD(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (*kappctrlv1alpha1.App, []corev1.Secret) {
	bd.APIVersion, bd.Kind = rukpakv1alpha2.GroupVersion.String(), "BundleDeployment"
	data, err := yaml.Marshal(bd)
	Expect(err).NotTo(HaveOccurred())
	file := filepath.Join(GinkgoT().TempDir(), "bd.yaml")
	Expect(os.WriteFile(file, data, 0o600)).To(Succeed())
	out, err := exec.CommandContext(ctx, env.Adapter.Binary(), "render", "-f", file, "--system-namespace", harness.SystemNamespace).Output()
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	objs, err := harness.DecodeYAML(out)
	Expect(err).NotTo(HaveOccurred())
	var app *kappctrlv1alpha1.App
	var secrets []corev1.Secret
	for _, u := range objs {
		raw, _ := json.Marshal(u.Object)
		switch u.GetKind() {
		case "App":
			app = &kappctrlv1alpha1.App{}
			Expect(json.Unmarshal(raw, app)).To(Succeed())
		case "Secret":
			var s corev1.Secret
			Expect(json.Unmarshal(raw, &s)).To(Succeed())
			secrets = append(secrets, s)
		}
	}
	Expect(app).NotTo(BeNil(), "render printed no App:\n%s", out)
	return app, secrets
}

var _ = Describe("for Carvel CLI users", func() {
	It("renders offline exactly the App and content Secrets the controller applies", func(ctx context.Context) {
		// Not the bundle render-tls installs: both are installed at once.
		plainBD(ctx, "render-plain", images["plain-v0/provides"])
		plainBD(ctx, "render-tls", tlsImages["hello"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.CertificateData = string(env.TLSRegistry.CA.PEM)
		})
		for _, name := range []string{"render-plain", "render-tls"} {
			Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
			bd, err := getBD(ctx, name)()
			Expect(err).NotTo(HaveOccurred())
			uid := bd.UID
			bd.ObjectMeta = metav1ObjectMeta(bd.Name)
			rendered, secrets := renderBD(ctx, bd)

			live, err := getApp(ctx, name)
			Expect(err).NotTo(HaveOccurred())
			Expect(rendered.Spec).To(Equal(live.Spec))
			Expect(live.Labels).To(Equal(rendered.Labels))
			Expect(rendered.OwnerReferences).To(HaveLen(1))
			rendered.OwnerReferences[0].UID = uid // render has no cluster to learn the UID from
			Expect(live.OwnerReferences).To(Equal(rendered.OwnerReferences))

			for _, s := range secrets {
				liveSecret := &corev1.Secret{}
				Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: s.Name}, liveSecret)).To(Succeed())
				Expect(liveSecret.Data).To(Equal(s.Data))
				Expect(liveSecret.Immutable).To(Equal(s.Immutable))
			}
			if name == "render-tls" {
				Expect(secrets).NotTo(BeEmpty())
			}
		}
	})

	It("leaves Apps that kapp inspects, without a change history (turned off: a ConfigMap per deploy)", func(ctx context.Context) {
		plainBD(ctx, "kapp-inspect", images["hello"])
		Eventually(getBD(ctx, "kapp-inspect")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		kapp := func(args ...string) []byte {
			cmd := exec.CommandContext(ctx, filepath.Join(env.Root, "bin", "kapp"), args...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+env.ControlPlane.Kubeconfig)
			out, err := cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "kapp %v:\n%s", args, out)
			return out
		}
		var inspect struct {
			Tables []struct {
				Rows []map[string]string `json:"Rows"`
			} `json:"Tables"`
		}
		Expect(json.Unmarshal(kapp("inspect", "-a", "kapp-inspect.app", "-n", harness.SystemNamespace, "--json", "--tty=false"), &inspect)).To(Succeed())
		Expect(inspect.Tables).NotTo(BeEmpty())
		var names []string
		for _, row := range inspect.Tables[0].Rows {
			names = append(names, row["name"])
		}
		Expect(names).To(ConsistOf("greetings.example.rukpak-kapp.dev", "hello", "hello-settings"))

		var changes struct {
			Tables []struct {
				Rows []map[string]string `json:"Rows"`
			} `json:"Tables"`
		}
		Expect(json.Unmarshal(kapp("app-change", "list", "-a", "kapp-inspect.app", "-n", harness.SystemNamespace, "--json", "--tty=false"), &changes)).To(Succeed())
		Expect(changes.Tables).To(HaveLen(1))
		Expect(changes.Tables[0].Rows).To(BeEmpty(), "rukpak-kapp deploys with --app-changes-max-to-keep=0")
	})
})
