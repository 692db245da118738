package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OLM v1 as operator-controller v0.9.0's end-to-end suite expects its
// cluster: its test catalog (an image of a file-based catalog, the suite's
// CATALOG_IMG) and the bundle images the catalog names
// (localhost/testdata/bundles/..., no port: HTTPS on localhost:443), both
// laid out as their Dockerfiles say from operator-controller's own module;
// catalogd v0.10.0 and operator-controller v0.9.0 themselves
// (StartOLMControllers), out of cluster, with the ServiceAccounts, RBAC and
// CRDs of their own config/.
const (
	// The wrapper modules that pin them (test/tools).
	operatorControllerModule = "test/tools/operator-controller"
	catalogdModule           = "test/tools/catalogd"
	// olmBundleHost is where the test catalog's bundle images live.
	olmBundleHost = "localhost"
	// The binaries test/tools builds.
	operatorControllerBinary = "operator-controller"
	catalogdBinary           = "catalogd"
	// OperatorControllerE2E is operator-controller v0.9.0's end-to-end
	// suite, built from its module, unchanged.
	OperatorControllerE2E = "operator-controller-e2e.test"
)

// OLM is what the harness serves for OLM v1.
type OLM struct {
	// ModuleDir is operator-controller v0.9.0's module; CatalogdDir
	// catalogd v0.10.0's.
	ModuleDir, CatalogdDir string
	// CatalogImage is the test catalog's image, the suite's CATALOG_IMG.
	CatalogImage string
	// Bundles serves the bundle images at localhost (443) in the adapter's
	// and kapp-controller's view of the network.
	Bundles *Registry
	// CatalogdURL is catalogd's content server, as catalogs'
	// status.contentURL name it.
	CatalogdURL string

	env                          *Env
	catalogd, operatorController *process
}

// startOLM serves the test catalog and its bundles, before kapp-controller
// and the adapter start in the view it sets up.
func (e *Env) startOLM(ctx context.Context) error {
	o := &OLM{env: e}
	var err error
	if o.ModuleDir, err = e.moduleDir(ctx, operatorControllerModule, "github.com/operator-framework/operator-controller"); err != nil {
		return err
	}
	if o.CatalogdDir, err = e.moduleDir(ctx, catalogdModule, "github.com/operator-framework/catalogd"); err != nil {
		return err
	}
	l, addr, err := listenLoopback443()
	if err != nil {
		return err
	}
	webCA, err := NewTestCA("rukpak-kapp harness web CA (stands for the public CAs)")
	if err != nil {
		_ = l.Close()
		return err
	}
	if e.tools.view, err = e.newFetchView(ctx, filepath.Join(e.Dir, "fetchview"), map[string]string{olmBundleHost: addr}, webCA); err != nil {
		_ = l.Close()
		return err
	}
	if o.Bundles, err = serveRegistry(l, olmBundleHost, "", "", webCA); err != nil {
		_ = l.Close()
		return err
	}
	e.OLM = o
	testdata := filepath.Join(o.ModuleDir, "testdata")
	// The catalog's entries name four versions of one prometheus bundle
	// (operator-controller's Makefile tags one build four times) and one
	// plain bundle.
	for _, tag := range []string{"v1.0.0", "v1.0.1", "v1.2.0", "v2.0.0"} {
		if _, _, err := o.Bundles.PushDockerContext(filepath.Join(testdata, "bundles", "registry-v1", "prometheus-operator.v1.0.0"),
			"testdata/bundles/registry-v1/prometheus-operator:"+tag); err != nil {
			return err
		}
	}
	if _, _, err := o.Bundles.PushDockerContext(filepath.Join(testdata, "bundles", "plain-v0", "plain.v0.1.0"), "testdata/bundles/plain-v0/plain:v0.1.0"); err != nil {
		return err
	}
	if e.Registry == nil {
		return fmt.Errorf("the test catalog's image is served by the harness's registry: OLM needs Servers")
	}
	o.CatalogImage, _, err = e.Registry.PushDockerfile(filepath.Join(testdata, "catalogs"), "test-catalog.Dockerfile", "test-catalog:e2e")
	return err
}

// listenLoopback443 opens port 443 on a loopback address picked at random
// (so nothing else on the machine is in the way), as the bundle images'
// host serves them.
func listenLoopback443() (net.Listener, string, error) {
	var last error
	for range 20 {
		addr := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
		l, err := net.Listen("tcp", net.JoinHostPort(addr, "443"))
		if err == nil {
			return l, addr, nil
		}
		last = err
	}
	return nil, "", fmt.Errorf("listen on loopback port 443 for the bundle images of operator-controller's test catalog (needs root): %w", last)
}

// moduleDir is where Go keeps the module that the wrapper module mod pins,
// downloading it if need be.
func (e *Env) moduleDir(ctx context.Context, mod, path string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", path)
	cmd.Dir = filepath.Join(e.Root, mod)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("download %s from %s: %w", path, mod, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("read go mod download's answer for %s: %w", path, err)
	}
	if m.Dir == "" {
		return "", fmt.Errorf("%s was not downloaded: %s", path, m.Error)
	}
	return m.Dir, nil
}

// StartOLMControllers installs catalogd's and operator-controller's CRDs,
// namespaces, ServiceAccounts and RBAC from their own config/default (their
// Deployments left out) and runs each binary out of cluster as its
// Deployment runs it: its ServiceAccount's token, its args, less leader
// election (which needs a pod's namespace), with its ports and cache on
// this machine.
func (e *Env) StartOLMControllers(ctx context.Context) error {
	o := e.OLM
	if o == nil {
		return fmt.Errorf("the OLM controllers need the harness's OLM option")
	}
	ports, err := freePorts(5)
	if err != nil {
		return err
	}
	serve := fmt.Sprintf("127.0.0.1:%d", ports[0])
	o.CatalogdURL = "http://" + serve
	cache := filepath.Join(e.Dir, "catalogd-cache")
	if o.catalogd, err = o.start(ctx, o.CatalogdDir, catalogdBinary, ports[1], ports[2], map[string]string{
		"--catalogs-server-addr": serve, "--http-external-address": o.CatalogdURL, "--cache-dir": cache,
	}); err != nil {
		return err
	}
	if o.operatorController, err = o.start(ctx, o.ModuleDir, operatorControllerBinary, ports[3], ports[4], map[string]string{
		"--cache-path": filepath.Join(e.Dir, "operator-controller-cache"),
	}); err != nil {
		o.catalogd.Stop(5 * time.Second)
		return err
	}
	return nil
}

// start applies moduleDir's config/default but its Deployment and runs bin
// as that Deployment's manager container, with set's flags in place of its
// own of the same name.
func (o *OLM) start(ctx context.Context, moduleDir, bin string, metrics, probe int, set map[string]string) (*process, error) {
	e := o.env
	out, err := e.Kustomize(ctx, filepath.Join(moduleDir, "config", "default"))
	if err != nil {
		return nil, err
	}
	objs, err := DecodeYAML(out)
	if err != nil {
		return nil, err
	}
	var deployment *appsv1.Deployment
	for _, u := range objs {
		if u.GetKind() == "Deployment" {
			deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, deployment); err != nil {
				return nil, fmt.Errorf("read %s's Deployment: %w", bin, err)
			}
			continue
		}
		if err := e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("rukpak-kapp-harness"), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("apply %s's %s %s: %w", bin, u.GetKind(), u.GetName(), err)
		}
	}
	if err := WaitForCRDs(ctx, e.Client, objs); err != nil {
		return nil, err
	}
	if deployment == nil {
		return nil, fmt.Errorf("%s's config/default has no Deployment", bin)
	}
	args, err := managerArgs(deployment, set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	kubeconfig, err := e.ServiceAccountKubeconfig(ctx, deployment.Namespace, deployment.Spec.Template.Spec.ServiceAccountName)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.Dir, bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	probeAddr := fmt.Sprintf("127.0.0.1:%d", probe)
	args = append(args, "--kubeconfig", kubeconfig, fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics), "--health-probe-bind-address="+probeAddr)
	return e.startTool(ctx, bin, bin, dir, probeAddr, args)
}

// managerArgs are the args of d's manager container with set's values for
// the flags set names, without leader election and the bind addresses,
// which the harness chooses.
func managerArgs(d *appsv1.Deployment, set map[string]string) ([]string, error) {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		var out []string
		seen := map[string]bool{}
		for _, a := range c.Args {
			name, _, _ := strings.Cut(a, "=")
			switch {
			case name == "--leader-elect", name == "--metrics-bind-address", name == "--health-probe-bind-address":
			case set[name] != "":
				out = append(out, name+"="+set[name])
				seen[name] = true
			default:
				out = append(out, a)
			}
		}
		for name, v := range set {
			if !seen[name] {
				out = append(out, name+"="+v)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("Deployment %s has no manager container", d.Name)
}

// StopOLMControllers ends operator-controller and catalogd.
func (o *OLM) StopOLMControllers() {
	for _, p := range []*process{o.operatorController, o.catalogd} {
		if p != nil {
			p.Stop(10 * time.Second)
		}
	}
}
