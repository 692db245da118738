package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KappControllerNamespace is where kapp-controller looks for its config.
const KappControllerNamespace = "kapp-controller"

// Without Options.PackagingAPI the aggregated packaging API is off, but the
// PackageInstall controller still watches these kinds; without them its
// cache never syncs and kapp-controller exits after two minutes. They store
// anything and validate nothing (no field selectors, no name rules), so
// tests of packaging run with the real API.
const packagingStandIns = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: packages.data.packaging.carvel.dev
spec:
  group: data.packaging.carvel.dev
  names: {kind: Package, listKind: PackageList, plural: packages, singular: package}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: packagemetadatas.data.packaging.carvel.dev
spec:
  group: data.packaging.carvel.dev
  names: {kind: PackageMetadata, listKind: PackageMetadataList, plural: packagemetadatas, singular: packagemetadata}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

const kappControllerNamespaceYAML = `
apiVersion: v1
kind: Namespace
metadata:
  name: kapp-controller
`

// KappController is kapp-controller's two processes: the controller and
// the sidecar that runs vendir, ytt and helm for it.
type KappController struct {
	// Namespace limits the controller to the Apps of one namespace from
	// its next start on; empty: every namespace.
	Namespace string
	// Concurrency is its -concurrency (App workers) from its next start on;
	// 0: the harness's 4, which keeps the suites' load on 2 cores low.
	// kapp-controller's own default is 10.
	Concurrency      int
	name             string
	dir              string
	env              []string
	sidecar, manager *process
	tools            *toolEnv
	// packaging is set when the controller serves the packaging API.
	packaging *packagingAPI
}

// installKappControllerAPI installs kapp-controller's CRDs and namespace,
// once for every instance, and the packaging stand-ins unless the real
// packaging API is served.
func installKappControllerAPI(ctx context.Context, t *toolEnv, c client.Client, standIns bool) error {
	crds, err := os.ReadFile(filepath.Join(t.bin, "kapp-controller-crds.yaml"))
	if err != nil {
		return fmt.Errorf("read kapp-controller CRDs (run make tools): %w", err)
	}
	docs := string(crds) + "\n---\n" + kappControllerNamespaceYAML
	if standIns {
		docs += "\n---\n" + packagingStandIns
	}
	objs, err := ApplyYAML(ctx, c, []byte(docs))
	if err != nil {
		return fmt.Errorf("install kapp-controller CRDs: %w", err)
	}
	return WaitForCRDs(ctx, c, objs)
}

// startKappController runs an instance named name (its log names) that
// reconciles the Apps of namespace (empty: all) with kubeconfig and workers
// App workers (0: the harness's 4, see KappController.Concurrency); with packaging set it also
// serves the packaging API.
func startKappController(ctx context.Context, t *toolEnv, cp *ControlPlane, dir, name, namespace, kubeconfig string, trusted *TestCA, workers int, packaging *packagingAPI) (*KappController, error) {
	for _, d := range []string{"home", "memtmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	caFile := filepath.Join(dir, "trusted-ca.pem")
	if err := os.WriteFile(caFile, t.trustedByGit(trusted), 0o644); err != nil {
		return nil, err
	}
	env := append(withPath(t.base, t.bin),
		"KUBECONFIG="+kubeconfig,
		"HOME="+filepath.Join(dir, "home"),
		"KAPPCTRL_SYSTEM_NAMESPACE="+KappControllerNamespace,
		"KAPPCTRL_SIDECAREXEC_SOCK="+filepath.Join(dir, "sidecarexec.sock"),
		"KAPPCTRL_MEM_TMP_DIR="+filepath.Join(dir, "memtmp"),
		// ServiceAccount-based Apps build a kubeconfig from these.
		"KAPPCTRL_KUBERNETES_CA_DATA="+string(cp.CAData),
		"KUBERNETES_SERVICE_HOST=127.0.0.1",
		"KUBERNETES_SERVICE_PORT="+itoa(cp.Port),
		// What a cluster would put in kapp-controller's caCerts: git
		// servers signed by this CA are trusted.
		"GIT_SSL_CAINFO="+caFile,
	)
	kc := &KappController{Namespace: namespace, Concurrency: workers, name: name, dir: dir, env: env, tools: t, packaging: packaging}
	if err := kc.Start(ctx); err != nil {
		return nil, err
	}
	return kc, nil
}

// Start runs the sidecar, waits for its socket, then runs the controller.
func (kc *KappController) Start(ctx context.Context) error {
	sock := filepath.Join(kc.dir, "sidecarexec.sock")
	_ = os.Remove(sock)
	var err error
	kc.sidecar, err = kc.tools.startFetcher(kc.name+"-sidecarexec", kc.dir, kc.env, nil, "", kc.binary(), "-sidecarexec")
	if err != nil {
		return err
	}
	if err := capMemory(kc.sidecar.Pid(), sidecarMemory); err != nil {
		kc.sidecar.Stop(5 * time.Second)
		return err
	}
	if err := kc.sidecar.waitFor(ctx, 30*time.Second, "sidecar socket", func() error {
		_, err := os.Stat(sock)
		return err
	}); err != nil {
		return err
	}
	if err := kc.StartController(ctx); err != nil {
		kc.sidecar.Stop(5 * time.Second)
		return err
	}
	return nil
}

// StartController starts the controller process alone, as a restart of its
// container would; the sidecar keeps running.
func (kc *KappController) StartController(ctx context.Context) error {
	logStart := logSize(filepath.Join(kc.tools.logDir, kc.name+".log"))
	workers := kc.Concurrency
	if workers == 0 {
		workers = 4
	}
	args := []string{"-start-api-server=false", "-metrics-bind-address=0", "-concurrency=" + itoa(workers)}
	if kc.Namespace != "" {
		args = append(args, "-namespace="+kc.Namespace)
	}
	var err error
	if kc.packaging != nil {
		kc.manager, err = kc.packaging.start(kc, args)
	} else {
		kc.manager, err = kc.tools.startFetcher(kc.name, kc.dir, kc.tools.withGC(kc.env), nil, "", kc.binary(), args...)
	}
	if err != nil {
		return err
	}
	// kapp-controller has no readiness endpoint when its metrics are off;
	// its log says when its workers run.
	return kc.manager.waitFor(ctx, 60*time.Second, "controller start", func() error {
		data, _ := os.ReadFile(kc.manager.logPath)
		if int64(len(data)) > logStart && strings.Contains(string(data[logStart:]), "Starting workers") {
			return nil
		}
		return errNotYet
	})
}

// sidecarMemory stands in for the memory limit of the sidecar's container:
// without one, a YAML bomb in a bundle would have ytt take the machine's
// memory. Each process the sidecar runs gets its own cap.
const sidecarMemory = 4 << 30

// capMemory limits the address space of pid and of the processes it starts
// from then on; the sidecar starts none before the controller asks.
func capMemory(pid int, bytes uint64) error {
	limit := unix.Rlimit{Cur: bytes, Max: bytes}
	if err := unix.Prlimit(pid, unix.RLIMIT_AS, &limit, nil); err != nil {
		return fmt.Errorf("cap the memory of process %d: %w", pid, err)
	}
	return nil
}

// StartKappController runs another kapp-controller, named name in its logs,
// for the Apps of namespace only, alongside the harness's own (which installed
// the CRDs). It authenticates as the ServiceAccount kapp-controller/name
// (bound to cluster-admin), so the API server's audit log tells its
// requests apart from the main instance's.
func (e *Env) StartKappController(ctx context.Context, name, namespace string) (*KappController, error) {
	if err := e.ClusterAdminAccount(ctx, KappControllerNamespace, name); err != nil {
		return nil, err
	}
	dir := filepath.Join(e.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	kubeconfig, err := e.ServiceAccountKubeconfig(ctx, KappControllerNamespace, name)
	if err != nil {
		return nil, err
	}
	return startKappController(ctx, e.tools, e.ControlPlane, dir, name, namespace, kubeconfig, e.ClusterCA, e.kcWorkers, nil)
}

func (kc *KappController) binary() string { return filepath.Join(kc.tools.bin, "kapp-controller") }

func logSize(path string) int64 {
	if info, err := os.Stat(path); err == nil {
		return info.Size()
	}
	return 0
}

// Pids are the controller's and the sidecar's process ids; the sidecar is
// the parent of the vendir, ytt, helm and kapp runs.
func (kc *KappController) Pids() []int { return []int{kc.manager.Pid(), kc.sidecar.Pid()} }

// Stop ends both processes.
func (kc *KappController) Stop() {
	kc.manager.Stop(10 * time.Second)
	kc.sidecar.Stop(5 * time.Second)
}

// KillController ends the controller at once, as a crash would; the sidecar stays.
func (kc *KappController) KillController() { kc.manager.Kill() }

func withPath(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	path := dir
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = dir + string(os.PathListSeparator) + v
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+path)
}
