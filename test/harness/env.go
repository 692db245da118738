package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datapackagingv1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// SystemNamespace is the adapter's namespace in the harness.
const SystemNamespace = "rukpak-system"

// Options choose which parts to start beyond the API server.
type Options struct {
	// ControllerManager runs kube-controller-manager (namespace deletion, GC).
	ControllerManager bool
	// FakeNodes runs kube-scheduler and kwok with one Ready fake node, so
	// workloads become Available (needs ControllerManager).
	FakeNodes      bool
	KappController bool
	// PackagingAPI has that kapp-controller serve data.packaging.carvel.dev
	// (Package, PackageMetadata) from its own aggregated API server, as in
	// a cluster, instead of stand-in CRDs. Needs root (see packagingapi.go).
	PackagingAPI bool
	// KappControllerAPI installs kapp-controller's CRDs without running it,
	// for tests that write App status themselves.
	KappControllerAPI bool
	// KappControllerNamespace limits that kapp-controller to the Apps of
	// one namespace; empty: every namespace.
	KappControllerNamespace string
	// KappControllerConcurrency is every kapp-controller's -concurrency; 0:
	// the harness's 4 (see KappController.Concurrency).
	KappControllerConcurrency int
	Adapter                   bool
	// Servers runs the content servers on loopback: OCI registries (plain,
	// basic auth, TLS), HTTP file servers and git servers.
	Servers bool
	// AuditLog makes the API server log every request's metadata (user,
	// user agent, verb) to ControlPlane.AuditLog, for cost measurements.
	AuditLog bool
	// CatalogsLater leaves the catalog CRDs (config/catalogs) out
	// of the start: InstallCatalogsAPI installs them while the adapter runs.
	CatalogsLater bool
	// AdapterArgs go after the adapter's default flags, so they win.
	AdapterArgs []string
	// RukpakE2E serves what rukpak v0.24.0's end-to-end suite expects of
	// its cluster (rukpake2e.go): its registries, git server, Secrets and
	// github.com, under the names it uses, for the adapter and
	// kapp-controller. Needs root.
	RukpakE2E bool
	// OLM serves what operator-controller v0.9.0's end-to-end suite
	// expects of its cluster (olm.go): its test catalog's image on the
	// harness's registry and the catalog's bundle images on localhost:443
	// in the adapter's and kapp-controller's view of the network. Needs
	// root and Servers; StartOLMControllers then runs catalogd and
	// operator-controller.
	OLM bool
	// DefaultGC runs the control plane and kapp-controller's manager at
	// Go's default GOGC, as a cluster runs them: the benchmarks measure
	// their CPU and memory. Otherwise they collect garbage a quarter as
	// often (GOGC=400, see toolEnv.gc): 14% to 16% less of their CPU.
	DefaultGC bool
	// Bare leaves out rukpak-kapp's own objects (CRD, system namespace,
	// RBAC, admission policy), for tests that install a release as a user
	// would. Not with Adapter.
	Bare bool
}

// Env is a running local control plane and what was asked for on top.
type Env struct {
	Root   string
	Dir    string
	Client client.Client
	Scheme *runtime.Scheme

	ControlPlane   *ControlPlane
	KappController *KappController
	Adapter        *Adapter
	Registry       *Registry
	// PrivateRegistry requires basic auth.
	PrivateRegistry *Registry
	// TLSRegistry serves TLS with a certificate from its own test CA.
	TLSRegistry *Registry
	// Files and PrivateFiles serve tarballs over HTTP, the latter behind basic auth.
	Files, PrivateFiles *FileServer
	// Git serves repositories over smart HTTP; PrivateGit over HTTPS with a
	// certificate from ClusterCA, behind basic auth.
	Git, PrivateGit *GitServer
	// SSHGit serves Git's repositories over ssh with a generated client key.
	SSHGit *SSHGitServer
	// UntrustedFiles and UntrustedGit serve HTTPS with a certificate from
	// UntrustedCA, which nothing trusts: reaching them needs skip-verify.
	UntrustedFiles *FileServer
	UntrustedGit   *GitServer
	UntrustedCA    *TestCA
	// RukpakE2E is set with Options.RukpakE2E.
	RukpakE2E *RukpakE2E
	// OLM is set with Options.OLM.
	OLM *OLM
	// ClusterCA stands for the CAs a cluster's kapp-controller is configured
	// to trust; the harness hands it to kapp-controller's git.
	ClusterCA *TestCA

	tools           *toolEnv
	scheduler, kwok *process
	kcWorkers       int
	// kcOpts are the options kapp-controller was started with, for
	// StartKappControllerAgain.
	kcOpts Options

	webhookMu   sync.Mutex
	webhookAddr string
}

// Start brings up the parts named in opts. Logs of every process are kept
// under Dir/logs.
func Start(ctx context.Context, opts Options) (*Env, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rukpak-kapp-")
	if err != nil {
		return nil, err
	}
	e := &Env{Root: root, Dir: dir, kcWorkers: opts.KappControllerConcurrency}
	e.tools = &toolEnv{bin: filepath.Join(root, "bin"), logDir: filepath.Join(dir, "logs"), base: withoutProxy(os.Environ())}
	if !opts.DefaultGC {
		e.tools.gc = []string{"GOGC=400"}
	}
	if err := os.MkdirAll(e.tools.logDir, 0o755); err != nil {
		return nil, err
	}
	if err := e.start(ctx, opts); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

func (e *Env) start(ctx context.Context, opts Options) error {
	if _, err := os.Stat(filepath.Join(e.tools.bin, "kube-apiserver")); err != nil {
		return fmt.Errorf("local control plane binaries are missing; run `make tools` first: %w", err)
	}
	cpDir := filepath.Join(e.Dir, "controlplane")
	if err := os.MkdirAll(cpDir, 0o755); err != nil {
		return err
	}
	var err error
	if e.ControlPlane, err = startControlPlane(ctx, e.tools, cpDir, opts.AuditLog); err != nil {
		return err
	}
	e.Scheme = runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, rukpakv1alpha1.AddToScheme, rukpakv1alpha2.AddToScheme, kappctrlv1alpha1.AddToScheme,
		packagingv1alpha1.AddToScheme, datapackagingv1alpha1.AddToScheme, catalogsv1alpha1.AddToScheme} {
		if err := add(e.Scheme); err != nil {
			return err
		}
	}
	if e.Client, err = client.New(e.ControlPlane.Config, client.Options{Scheme: e.Scheme}); err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	if !opts.Bare {
		if err := e.installAPI(ctx, !opts.CatalogsLater); err != nil {
			return err
		}
	}
	if opts.KappController || opts.KappControllerAPI {
		if err := installKappControllerAPI(ctx, e.tools, e.Client, !opts.PackagingAPI); err != nil {
			return err
		}
		if !opts.Bare {
			if err := e.waitAdmitted(ctx); err != nil {
				return fmt.Errorf("BundleDeployments not admitted after kapp-controller's CRDs: %w", err)
			}
		}
	}
	// The garbage collector finds the kinds it follows at its start and
	// then only every 30 s: started after the CRDs, it follows
	// BundleDeployments and Apps from the first spec on, as in a cluster
	// where they were installed long ago (an orphaning delete of a kind it
	// does not follow yet waits for its next look).
	if opts.ControllerManager {
		if e.ControlPlane.kcm, err = e.ControlPlane.startControllerManager(ctx); err != nil {
			return err
		}
	}
	if opts.FakeNodes {
		if err := e.startFakeNodes(ctx); err != nil {
			return err
		}
	}
	if e.ClusterCA, err = NewTestCA("rukpak-kapp test cluster CA"); err != nil {
		return err
	}
	if opts.Servers {
		if e.Registry, err = StartRegistry("", ""); err != nil {
			return err
		}
		if e.PrivateRegistry, err = StartRegistry("rukpak-user", "rukpak-password"); err != nil {
			return err
		}
		if e.TLSRegistry, err = StartTLSRegistry(); err != nil {
			return err
		}
		if e.Files, err = StartFileServer("", "", nil); err != nil {
			return err
		}
		if e.PrivateFiles, err = StartFileServer("rukpak-user", "rukpak-password", nil); err != nil {
			return err
		}
		if e.Git, err = StartGitServer(filepath.Join(e.Dir, "git"), "", "", nil); err != nil {
			return err
		}
		if e.PrivateGit, err = StartGitServer(filepath.Join(e.Dir, "private-git"), "rukpak-user", "rukpak-password", e.ClusterCA); err != nil {
			return err
		}
		if e.SSHGit, err = StartSSHGitServer(e.Git); err != nil {
			return err
		}
		if e.UntrustedCA, err = NewTestCA("rukpak-kapp untrusted test CA"); err != nil {
			return err
		}
		if e.UntrustedFiles, err = StartFileServer("rukpak-user", "rukpak-password", e.UntrustedCA); err != nil {
			return err
		}
		if e.UntrustedGit, err = StartGitServer(filepath.Join(e.Dir, "untrusted-git"), "", "", e.UntrustedCA); err != nil {
			return err
		}
	}
	if opts.RukpakE2E {
		if err := e.startRukpakE2E(ctx); err != nil {
			return fmt.Errorf("serve what rukpak's end-to-end suite expects: %w", err)
		}
	}
	if opts.OLM {
		if opts.RukpakE2E {
			return fmt.Errorf("OLM and RukpakE2E each set up the fetchers' view of the network: choose one")
		}
		if err := e.startOLM(ctx); err != nil {
			return fmt.Errorf("serve what operator-controller's end-to-end suite expects: %w", err)
		}
	}
	if opts.PackagingAPI && !opts.KappController {
		return fmt.Errorf("the packaging API is served by kapp-controller: PackagingAPI needs KappController")
	}
	if opts.KappController {
		if err := e.startKappController(ctx, opts); err != nil {
			return err
		}
	}
	if opts.Adapter {
		if e.Adapter, err = startAdapter(ctx, e, opts.AdapterArgs); err != nil {
			return err
		}
	}
	return nil
}

// InstallCatalogsAPI installs the catalog CRDs and roles (config/catalogs) and
// waits until it is served.
func (e *Env) InstallCatalogsAPI(ctx context.Context) error {
	catalogs, err := e.Kustomize(ctx, "config/catalogs")
	if err != nil {
		return err
	}
	objs, err := ApplyYAML(ctx, e.Client, catalogs)
	if err != nil {
		return err
	}
	return WaitForCRDs(ctx, e.Client, objs)
}

// installAPI installs the BundleDeployment CRD from config/ (and the
// OperatorCatalog CRD, config/catalogs, unless told not to), the system
// namespace, the adapter's and installer's accounts from config/rbac, the
// adapter's webhooks from config/webhook and the finalizer policy from
// config/admission.
func (e *Env) installAPI(ctx context.Context, catalogs bool) error {
	crd, err := e.Kustomize(ctx, "config/crd")
	if err != nil {
		return err
	}
	objs, err := ApplyYAML(ctx, e.Client, crd)
	if err != nil {
		return err
	}
	if err := WaitForCRDs(ctx, e.Client, objs); err != nil {
		return err
	}
	if catalogs {
		if err := e.InstallCatalogsAPI(ctx); err != nil {
			return err
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SystemNamespace}}
	if err := e.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("create system namespace: %w", err)
	}
	rbac, err := e.Kustomize(ctx, "config/rbac")
	if err != nil {
		return err
	}
	if _, err = ApplyYAML(ctx, e.Client, rbac); err != nil {
		return err
	}
	webhooks, err := e.Kustomize(ctx, "config/webhook")
	if err != nil {
		return err
	}
	if _, err = ApplyYAML(ctx, e.Client, webhooks); err != nil {
		return err
	}
	return e.InstallAdmission(ctx)
}

// InstallAdmission applies config/admission (the finalizer policy) and
// waits until BundleDeployments can be created under it: kube-apiserver
// answers 503 ("Resource kind ... not found") for a few seconds after a
// CRD appears, until a mutating policy's type converter knows its schema.
func (e *Env) InstallAdmission(ctx context.Context) error {
	policy, err := e.Kustomize(ctx, "config/admission")
	if err != nil {
		return err
	}
	if _, err = ApplyYAML(ctx, e.Client, policy); err != nil {
		return err
	}
	return e.waitAdmitted(ctx)
}

// waitAdmitted waits until a BundleDeployment can be created under the
// finalizer policy. kube-apiserver answers 503 ("Resource kind ... not
// found") for a moment after any CRD is added, while the policy's type
// converter learns the new schemas, so this runs after every CRD the
// harness installs, not only after the BundleDeployment's.
func (e *Env) waitAdmitted(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return e.admitted(ctx, rukpakv1alpha2.ClassPlain) == nil, nil
	})
}

// finalizerPolicy is config/admission's MutatingAdmissionPolicy and the
// finalizer it adds to a BundleDeployment of a class it claims.
const (
	finalizerPolicy   = "rukpak-kapp-uninstall-finalizer"
	finalizerByPolicy = "core.rukpak.io/uninstall"
)

// admitted says whether a BundleDeployment of each class is admitted (a
// dry run) and, where the finalizer policy is installed and claims the
// class, comes back with the policy's finalizer: the policy is in effect.
// A create that passes before kube-apiserver has loaded the policy proves
// nothing: once loaded, the policy's type converter answers 503 ("Resource
// kind ... not found") until its next look at the OpenAPI paths (every 5
// s) has found the BundleDeployment's schema.
func (e *Env) admitted(ctx context.Context, classes ...string) error {
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{}
	if err := e.Client.Get(ctx, client.ObjectKey{Name: finalizerPolicy}, policy); apierrors.IsNotFound(err) {
		policy = nil
	} else if err != nil {
		return fmt.Errorf("read the MutatingAdmissionPolicy %s: %w", finalizerPolicy, err)
	}
	for _, class := range classes {
		probe := admissionProbe(class)
		if err := e.Client.Create(ctx, probe, client.DryRunAll); err != nil {
			return fmt.Errorf("a dry-run BundleDeployment of class %s: %w", class, err)
		}
		if policy != nil && claims(policy, class) && !slices.Contains(probe.Finalizers, finalizerByPolicy) {
			return fmt.Errorf("a dry-run BundleDeployment of class %s was admitted without the finalizer %s: the policy %s is not in effect yet", class, finalizerByPolicy, finalizerPolicy)
		}
	}
	return nil
}

// Kustomize renders a kustomization under the repository root, or at an
// absolute path (another module's).
func (e *Env) Kustomize(ctx context.Context, dir string) ([]byte, error) {
	abs := dir
	if !filepath.IsAbs(dir) {
		abs = filepath.Join(e.Root, dir)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(e.tools.bin, "kustomize"), "build", abs)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, stderr.String())
	}
	return out, nil
}

// Stop ends everything in reverse order and tells the lines of the logs
// that say the machine failed a component (reportTrouble). The temporary
// directory is kept when KEEP_HARNESS_DIR is set, for reading logs after a
// failure.
func (e *Env) Stop() {
	if e.Client != nil && e.ControlPlane != nil {
		// Asked while everything still runs: the state the specs saw.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for _, line := range apiServicesTrouble(ctx, e.Client) {
			fmt.Fprintln(os.Stderr, "harness: "+line)
		}
		cancel()
	}
	if e.OLM != nil {
		e.OLM.StopOLMControllers()
	}
	if e.Adapter != nil {
		e.Adapter.Stop()
	}
	if e.KappController != nil {
		e.KappController.Stop()
	}
	if e.OLM != nil && e.OLM.Bundles != nil {
		e.OLM.Bundles.Stop()
	}
	if e.Registry != nil {
		e.Registry.Stop()
	}
	if e.PrivateRegistry != nil {
		e.PrivateRegistry.Stop()
	}
	if e.TLSRegistry != nil {
		e.TLSRegistry.Stop()
	}
	if e.SSHGit != nil {
		e.SSHGit.Stop()
	}
	if e.RukpakE2E != nil {
		e.RukpakE2E.Stop()
	}
	for _, fs := range []*FileServer{e.Files, e.PrivateFiles, e.UntrustedFiles} {
		if fs != nil {
			fs.Stop()
		}
	}
	for _, gs := range []*GitServer{e.Git, e.PrivateGit, e.UntrustedGit} {
		if gs != nil {
			gs.Stop()
		}
	}
	e.kwok.Stop(5 * time.Second)
	e.scheduler.Stop(5 * time.Second)
	if e.ControlPlane != nil {
		e.ControlPlane.Stop()
	}
	reportTrouble(os.Stderr, e.tools.logDir)
	if os.Getenv("KEEP_HARNESS_DIR") == "" {
		_ = os.RemoveAll(e.Dir)
	}
}

// LogDir is where every process writes its output.
func (e *Env) LogDir() string { return e.tools.logDir }

// RepoRoot finds the directory of this module's go.mod from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/rukpak-kapp/rukpak-kapp\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("repository root not found above the working directory")
		}
		dir = parent
	}
}

// withoutProxy drops proxy settings: everything the harness runs talks on
// this machine only, and a proxy would intercept the API server's calls to
// webhooks (their URLs name Service DNS names, which no proxy setting
// exempts).
func withoutProxy(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(name) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// InstallKappControllerAPI installs kapp-controller's CRDs on a harness
// started without them, and runs nothing.
func (e *Env) InstallKappControllerAPI(ctx context.Context) error {
	if err := installKappControllerAPI(ctx, e.tools, e.Client, true); err != nil {
		return err
	}
	return e.waitAdmitted(ctx)
}

// InstallKappController installs kapp-controller's API (again: the apply
// changes nothing that is there) and starts it on a harness started
// without it, as installing kapp-controller in a running cluster does.
func (e *Env) InstallKappController(ctx context.Context) error {
	if e.KappController != nil {
		return fmt.Errorf("kapp-controller is already started")
	}
	if err := e.InstallKappControllerAPI(ctx); err != nil {
		return err
	}
	return e.startKappController(ctx, Options{KappController: true})
}

// StopKappController stops kapp-controller as an outage would: its CRDs
// stay, Apps and PackageInstalls wait, and its aggregated packaging API
// answers 503 until StartKappControllerAgain.
func (e *Env) StopKappController() {
	if e.KappController != nil {
		e.KappController.Stop()
		e.KappController = nil
	}
}

// StartKappControllerAgain starts kapp-controller as the harness first
// started it, after StopKappController.
func (e *Env) StartKappControllerAgain(ctx context.Context) error {
	if e.KappController != nil {
		return fmt.Errorf("kapp-controller is already started")
	}
	return e.startKappController(ctx, e.kcOpts)
}

func (e *Env) startKappController(ctx context.Context, opts Options) error {
	e.kcOpts = opts
	var err error
	kcDir := filepath.Join(e.Dir, "kc")
	if err := os.MkdirAll(kcDir, 0o755); err != nil {
		return err
	}
	var packaging *packagingAPI
	if opts.PackagingAPI {
		if packaging, err = e.preparePackagingAPI(ctx, kcDir); err != nil {
			return err
		}
	}
	kubeconfig := filepath.Join(kcDir, "kubeconfig")
	if err := e.ControlPlane.WriteKubeconfig(kubeconfig, KappControllerNamespace); err != nil {
		return err
	}
	if e.KappController, err = startKappController(ctx, e.tools, e.ControlPlane, kcDir, "kapp-controller", opts.KappControllerNamespace, kubeconfig, e.ClusterCA, e.kcWorkers, packaging); err != nil {
		return err
	}
	return nil
}
