// Package packaging_test runs kapp-controller's packaging API as a cluster
// serves it (its own aggregated API server, not stand-in CRDs) and checks
// what rukpak-kapp offers as Carvel packages on it: Packages and
// PackageMetadata through the aggregated API, listed as kctrl lists them,
// and the output of `rukpak-kapp render --as-package` installed through
// kapp-controller's PackageInstall reconciler, and the adapter's serve mode,
// which publishes BundleDeployments as Packages and installs them with
// PackageInstalls.
package packaging_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var (
	env *harness.Env
	// rukpakKapp is the binary, built once, that the specs run as a user would.
	rukpakKapp string
)

func TestPackaging(t *testing.T) {
	bdtest.RunSuite(t, "Packaging Suite", 2*time.Minute, 250*time.Millisecond)
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	// The adapter serves every BundleDeployment through a PackageInstall
	// unless its annotation says app, so both the flag and the annotation
	// are exercised.
	env, err = harness.Start(ctx, harness.Options{ControllerManager: true, FakeNodes: true, KappController: true, PackagingAPI: true, Servers: true,
		Adapter: true, AdapterArgs: []string{"--install-with=packageinstall"}, CatalogsLater: true})
	Expect(err).NotTo(HaveOccurred())
	bdtest.Use(env)
	GinkgoWriter.Printf("harness logs: %s\n", env.LogDir())
	rukpakKapp, err = harness.GoBinary(ctx, env.Root, "./cmd/rukpak-kapp", filepath.Join(env.Dir, "rukpak-kapp"))
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(6*time.Minute))

var _ = AfterSuite(func() {
	if env != nil {
		env.Stop()
	}
})
