package api_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var env *harness.Env

func TestAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "API Suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	env, err = harness.Start(ctx, harness.Options{})
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(3*60e9))

var _ = AfterSuite(func() {
	if env != nil {
		env.Stop()
	}
})
