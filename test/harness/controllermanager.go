package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// startControllerManager runs kube-controller-manager, so that namespaces
// finish deleting, garbage collection follows owner references, and
// ServiceAccount tokens and root CA ConfigMaps appear as in a real cluster.
func (cp *ControlPlane) startControllerManager(ctx context.Context) (*process, error) {
	kubeconfig := filepath.Join(cp.Dir, "kcm.kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, "kube-system"); err != nil {
		return nil, err
	}
	caFile := filepath.Join(cp.Dir, "certs", "apiserver.crt")
	p, err := startProcess("kube-controller-manager", cp.Dir, cp.env.withGC(cp.env.base), cp.env.logDir, filepath.Join(cp.env.bin, "kube-controller-manager"),
		"--kubeconfig", kubeconfig,
		"--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig,
		"--service-account-private-key-file", filepath.Join(cp.Dir, "sa.key"),
		"--root-ca-file", caFile,
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=*",
		"--use-service-account-credentials=false",
		"--concurrent-gc-syncs=5",
		// kwok renews node leases every 2s (fakenodes.go); a node whose
		// heartbeat stops is declared lost after 16s instead of 50s.
		"--node-monitor-period=2s",
		"--node-monitor-grace-period=16s",
	)
	if err != nil {
		return nil, err
	}
	return p, p.waitFor(ctx, 60*time.Second, "controllers started", func() error {
		data, _ := os.ReadFile(p.logPath)
		if strings.Contains(string(data), "Started controller") || strings.Contains(string(data), "Starting controller") {
			return nil
		}
		return errNotYet
	})
}
