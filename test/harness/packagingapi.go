package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// PackagingGlobalNamespace holds Packages that every namespace sees, as in
// kapp-controller's release.
const PackagingGlobalNamespace = "kapp-controller-packaging-global"

// What kapp-controller v0.53.1's release names (config/config/agg-api.yml,
// deployment.yml); its API server looks for the APIService by this name
// and signs its certificate for <service>.<namespace>.svc.
const (
	packagingAPIService     = "packaging-api"
	packagingAPIServiceName = "v1alpha1.data.packaging.carvel.dev"
	packagingAPIPortName    = "main"
	kappControllerAccount   = "kapp-controller-sa"
)

// kapp-controller's API server keeps fixed paths that no flag or variable
// moves: it writes its self-signed serving certificate under
// /home/kapp-controller (pkg/apiserver/apiserver.go, selfSignedCertDir),
// and its delegated authentication, authorization and core client read
// the in-cluster ServiceAccount files under /var/run/secrets (client-go's
// rest.InClusterConfig). The controller therefore runs in a mount
// namespace of its own in which directories of the harness are bound over
// /home and /var/run; nothing is written outside the harness's directory.
const (
	homeDir        = "/home"
	varRunDir      = "/var/run"
	inClusterSADir = "secrets/kubernetes.io/serviceaccount"
)

// packagingAPI is what the controller needs to serve the packaging API: its
// port and the directories bound over the paths above.
type packagingAPI struct {
	port    int
	binds   []string
	sandbox string
}

// preparePackagingAPI registers the APIService and a route to this
// machine's non-loopback address (kube-apiserver refuses loopback
// endpoints), makes the controller's ServiceAccount and its in-cluster
// files, and builds the mount helper. kapp-controller must find the
// APIService when it starts: it writes its CA into it.
func (e *Env) preparePackagingAPI(ctx context.Context, dir string) (*packagingAPI, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("serving kapp-controller's packaging API needs root, to bind its fixed certificate and ServiceAccount paths in a mount namespace of its own (CI runs as root)")
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// kapp-controller refuses ports below 1024 (pkg/apiserver/apiserver.go).
	if port < 1024 {
		return nil, fmt.Errorf("the kernel offered port %d; kapp-controller's API server needs one of 1024 or more", port)
	}
	ip, err := HostIP()
	if err != nil {
		return nil, err
	}
	for _, ns := range []string{KappControllerNamespace, PackagingGlobalNamespace} {
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
			return nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	if err := e.RouteToHost(ctx, KappControllerNamespace, packagingAPIService, packagingAPIPortName, ip, int32(port)); err != nil {
		return nil, err
	}
	if _, err := ApplyYAML(ctx, e.Client, []byte(fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: %s
spec:
  group: data.packaging.carvel.dev
  version: v1alpha1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {namespace: %s, name: %s}
`, packagingAPIServiceName, KappControllerNamespace, packagingAPIService))); err != nil {
		return nil, err
	}
	if err := e.ClusterAdminAccount(ctx, KappControllerNamespace, kappControllerAccount); err != nil {
		return nil, err
	}
	home, run := filepath.Join(dir, "root-home"), filepath.Join(dir, "root-var-run")
	if err := os.MkdirAll(filepath.Join(home, "kapp-controller"), 0o755); err != nil {
		return nil, err
	}
	if err := e.writeServiceAccount(ctx, filepath.Join(run, inClusterSADir), KappControllerNamespace, kappControllerAccount); err != nil {
		return nil, err
	}
	if _, err := os.Stat(homeDir); err != nil {
		return nil, fmt.Errorf("kapp-controller's API server writes its certificate under %s/kapp-controller, and the harness binds a directory over %s; this machine has none: %w", homeDir, homeDir, err)
	}
	// /var/run is usually a link to /run; the mount goes on what it names.
	varRun, err := filepath.EvalSymlinks(varRunDir)
	if err != nil {
		return nil, fmt.Errorf("find %s to bind the in-cluster ServiceAccount files under: %w", varRunDir, err)
	}
	sandbox, err := e.privateMounts(ctx)
	if err != nil {
		return nil, err
	}
	return &packagingAPI{port: port, sandbox: sandbox, binds: []string{home + ":" + homeDir, run + ":" + varRun}}, nil
}

// start runs the controller with its API server, in its own mount
// namespace, with the flags kapp-controller's release passes and the one
// Kubernetes 1.37 needs: the API server library of v0.53.1 asks for a
// flowcontrol API version that 1.37 no longer serves.
func (p *packagingAPI) start(kc *KappController, args []string) (*process, error) {
	args = append(args[:0:0], args...)
	for i, a := range args {
		if a == "-start-api-server=false" {
			args[i] = "-start-api-server=true"
		}
	}
	args = append(args, "-enable-api-priority-and-fairness=false", "-packaging-global-namespace="+PackagingGlobalNamespace)
	env := append(kc.tools.withGC(kc.env), "KAPPCTRL_API_PORT="+itoa(p.port))
	return kc.tools.startFetcher(kc.name, kc.dir, env, p.binds, p.sandbox, kc.binary(), args...)
}

// RouteToHost routes the Service ns/name's port portName to ip:port, as
// a cluster's endpoints reach its pods: the Service selector-less (made,
// with portName as port 443, when there is none), its Endpoints (below)
// and one EndpointSlice to ip:port, which kube-apiserver 1.37 resolves
// Services with for aggregated APIs and webhooks (kube-aggregator's
// NewEndpointServiceResolver reads EndpointSlices only). Every other slice
// of the Service goes: the endpointslice controller's from when it had a
// selector (its pods are on fake nodes, at addresses nothing here
// reaches), and an earlier route's. A Service routed again moves.
func (e *Env) RouteToHost(ctx context.Context, ns, name, portName, ip string, port int32) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, e.Client, svc, func() error {
		if svc.CreationTimestamp.IsZero() {
			svc.Spec.Ports = []corev1.ServicePort{{Name: portName, Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(port)}}
		}
		// Without a selector kube-controller-manager writes no endpoints
		// of its own for it.
		svc.Spec.Selector = nil
		return nil
	}); err != nil {
		return fmt.Errorf("make service %s/%s selector-less: %w", ns, name, err)
	}
	if err := e.endpointsToHost(ctx, ns, name, portName, ip, port); err != nil {
		return err
	}
	if err := e.Client.DeleteAllOf(ctx, &discoveryv1.EndpointSlice{}, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
		return fmt.Errorf("delete the endpoint slices of service %s/%s: %w", ns, name, err)
	}
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-host", Namespace: ns, Labels: map[string]string{
			discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "rukpak-kapp-harness",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
	}
	if err := e.Client.Create(ctx, slice); err != nil {
		return fmt.Errorf("create endpoint slice %s/%s: %w", ns, slice.Name, err)
	}
	return nil
}

// endpointsToHost writes the Service's Endpoints as the host, marked not
// to be mirrored. A Service that had a selector (one a manifest applied)
// keeps the Endpoints kube-controller-manager wrote for its pods; once the
// Service is selector-less, the EndpointSlice mirroring controller copies
// them into a slice alongside the host's, and the API server picks one of the
// two at random (found when a webhook call reached a fake pod's address).
// Marked skip-mirror, no mirror is made (one made is deleted), and the
// host's slice is the one route.
func (e *Env) endpointsToHost(ctx context.Context, ns, name, portName, ip string, port int32) error {
	//nolint:staticcheck // Endpoints are what the mirroring controller reads.
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	_, err := controllerutil.CreateOrUpdate(ctx, e.Client, ep, func() error {
		if ep.Labels == nil {
			ep.Labels = map[string]string{}
		}
		ep.Labels[discoveryv1.LabelSkipMirror] = "true"
		//nolint:staticcheck // as above
		ep.Subsets = []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: ip}},
			Ports:     []corev1.EndpointPort{{Name: portName, Port: port, Protocol: corev1.ProtocolTCP}},
		}}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write endpoints %s/%s: %w", ns, name, err)
	}
	return nil
}
