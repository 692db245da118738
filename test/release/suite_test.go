// Package release_test proves the shipped artefacts link by link on the
// local control plane, where pods do not run: make image and make release
// against the harness registry, the image run as the Deployment's pod says,
// the release manifest and its upgrade, the Carvel package through
// kapp-controller, and make run against a cluster.
package release_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var env *harness.Env

func TestRelease(t *testing.T) {
	bdtest.RunSuite(t, "Release Suite", 2*time.Minute, 250*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	// Bare: the cluster gets rukpak-kapp only from the release under test.
	// The package installs through kapp-controller's own packaging API.
	env, err = harness.Start(ctx, harness.Options{ControllerManager: true, FakeNodes: true, KappController: true, PackagingAPI: true, Servers: true, Bare: true})
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("harness logs: %s\n", env.LogDir())
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if env != nil {
		env.Stop()
	}
})

// runMake runs a make target in the checkout as a user would, with vars.
func runMake(ctx context.Context, vars ...string) string {
	cmd := exec.CommandContext(ctx, "make", append([]string{"-s"}, vars...)...)
	cmd.Dir = env.Root
	out, err := cmd.CombinedOutput()
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "make %s:\n%s", strings.Join(vars, " "), out)
	return string(out)
}

// lineAfter is the rest of the first output line that starts with prefix.
func lineAfter(out, prefix string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	Fail(fmt.Sprintf("no line %q in:\n%s", prefix, out))
	return ""
}

// warnings collects the API server's warning headers.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.list...)
}

// applyServerSide applies a manifest as `kubectl apply --server-side` does
// (field manager kubectl, no forced ownership) and returns every warning
// the API server sent.
func applyServerSide(ctx context.Context, manifest []byte) []string {
	w := &warnings{}
	cfg := rest.CopyConfig(env.ControlPlane.Config)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	objs, err := harness.DecodeYAML(manifest)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, u := range objs {
		ExpectWithOffset(1, c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("kubectl"))).
			To(Succeed(), "apply %s %s", u.GetKind(), u.GetName())
	}
	ExpectWithOffset(1, harness.WaitForCRDs(ctx, env.Client, objs)).To(Succeed())
	return w.all()
}

func getBD(ctx context.Context, name string) func() (*rukpakv1alpha2.BundleDeployment, error) {
	return func() (*rukpakv1alpha2.BundleDeployment, error) {
		bd := &rukpakv1alpha2.BundleDeployment{}
		return bd, env.Client.Get(ctx, client.ObjectKey{Name: name}, bd)
	}
}

// installed is the Installed condition's status, reason and whether it is
// for the current generation.
func installed(bd *rukpakv1alpha2.BundleDeployment) string {
	c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	if c == nil {
		return "no Installed condition"
	}
	return fmt.Sprintf("%s/%s/current=%v: %s", c.Status, c.Reason, c.ObservedGeneration == bd.Generation, c.Message)
}

const installedOK = "True/InstallationSucceeded/current=true: "

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
