package bdtest

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // Ginkgo's DSL reads best unqualified.
	. "github.com/onsi/gomega"    //nolint:revive // as does Gomega's.
)

// RunSuite runs a Ginkgo suite whose Eventually waits give up after
// timeout, polling every poll. A spec's context has no deadline, and
// Gomega applies no default timeout to an Eventually given a context
// unless told to: such a wait would hang the suite instead of failing.
func RunSuite(t *testing.T, name string, timeout, poll time.Duration) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(timeout)
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultEventuallyPollingInterval(poll)
	RunSpecs(t, name)
}
