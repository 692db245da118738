package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Adapter is the rukpak-kapp binary running against the harness.
type Adapter struct {
	MetricsURL string
	// ReadyURL is the adapter's readiness probe.
	ReadyURL string
	proc     *process
	env      *Env
	args     []string
	// base is how many of args are the harness's defaults.
	base int
	// first are the flags it started with, before any Restart's.
	first []string
	bin   string
}

// startAdapter builds cmd/rukpak-kapp once per harness and runs it.
func startAdapter(ctx context.Context, e *Env, extra []string) (*Adapter, error) {
	bin, err := GoBinary(ctx, e.Root, "./cmd/rukpak-kapp", filepath.Join(e.Dir, "rukpak-kapp"))
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	probes, err := freePort()
	if err != nil {
		return nil, err
	}
	webhooks, err := e.AdapterWebhookAddress(ctx)
	if err != nil {
		return nil, err
	}
	a := &Adapter{
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", port),
		ReadyURL:   fmt.Sprintf("http://127.0.0.1:%d/readyz", probes),
		env:        e,
		bin:        bin,
		args: []string{"run",
			"--system-namespace", SystemNamespace,
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", port),
			"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probes),
			"--webhook-bind-address", webhooks,
			// contentURLs name the address a test reaches the webhook server
			// at (ContentClient verifies its certificate for the Service).
			"--content-address", "https://" + webhooks,
			"--content-dir", filepath.Join(e.Dir, "adapter-content"),
			// A killed adapter leaves its catalog spools: here they go
			// with the harness's directory.
			"--catalog-dir", filepath.Join(e.Dir, "adapter-catalogs"),
			// kapp-controller re-fetches no more often than every 30 s.
			"--branch-sync-period", "30s",
			// Well above any honest template step here, below the 15-40 s the
			// sidecar's memory cap takes to stop a runaway ytt.
			"--template-timeout", "10s",
			// The built-in classes and one alias, as a cluster that runs
			// rukpak-kapp alongside rukpak would (the scale benchmark does).
			"--classes", strings.Join([]string{rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry,
				AliasPlainClass + "=" + rukpakv1alpha2.ClassPlain}, ","),
		},
	}
	a.base = len(a.args)
	a.args = append(a.args, extra...)
	a.first = a.args
	return a, a.Start(ctx)
}

// StartAdapter starts the adapter on a harness started without it, with
// extra flags after the defaults (a later --classes wins).
func (e *Env) StartAdapter(ctx context.Context, extra ...string) error {
	if e.Adapter != nil {
		return fmt.Errorf("the adapter is already started; use Adapter.Stop and Adapter.Start")
	}
	a, err := startAdapter(ctx, e, extra)
	if err != nil {
		return err
	}
	e.Adapter = a
	return nil
}

// SetArgs replaces the extra flags the adapter runs with from its next Start.
func (a *Adapter) SetArgs(extra ...string) { a.args = append(a.args[:a.base:a.base], extra...) }

// AliasPlainClass is a provisioner class the harness's adapter installs as
// core-rukpak-io-plain.
const AliasPlainClass = "kapp-plain"

// AdapterServiceAccount is the adapter's own account from config/rbac; the
// harness runs the adapter with its token so every test exercises that RBAC.
const AdapterServiceAccount = "rukpak-kapp"

// Start runs the adapter process and waits until it serves metrics.
func (a *Adapter) Start(ctx context.Context) error {
	kubeconfig, err := a.env.ServiceAccountKubeconfig(ctx, SystemNamespace, AdapterServiceAccount)
	if err != nil {
		return err
	}
	env := append(os.Environ(), "KUBECONFIG="+kubeconfig)
	a.proc, err = a.env.tools.startFetcher("rukpak-kapp", a.env.Dir, env, nil, "", a.bin, a.args...)
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: time.Second}
	if err := a.proc.waitFor(ctx, 30*time.Second, "metrics endpoint", func() error { return httpOK(c, a.MetricsURL, "") }); err != nil {
		return err
	}
	return a.proc.waitFor(ctx, 30*time.Second, "BundleDeployments admitted after the conversion webhook's caBundle", a.env.BundleDeploymentsAdmitted)
}

// BundleDeploymentsAdmitted says an adapter's CA is in the BundleDeployment
// CRD's conversion webhook and a BundleDeployment of each class
// config/admission matches is admitted (a dry run). The adapter writes its
// CA into the CRD as it starts; the API server's admission policies then
// learn the changed CRD's schema anew, and refuse a BundleDeployment
// meanwhile (503, "Resource kind ... not found"): a test that creates one
// right after an adapter started would fail on a busy machine. The harness
// waits for it after starting its adapter; a suite that runs the adapter
// otherwise (a Pod of the release) polls it.
func (e *Env) BundleDeploymentsAdmitted() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := e.Client.Get(ctx, client.ObjectKey{Name: "bundledeployments.core.rukpak.io"}, crd); err != nil {
		return err
	}
	if conv := crd.Spec.Conversion; conv != nil && conv.Webhook != nil && conv.Webhook.ClientConfig != nil && len(conv.Webhook.ClientConfig.CABundle) == 0 {
		return errors.New("no caBundle in the conversion webhook yet")
	}
	return e.admitted(ctx, rukpakv1alpha2.ClassPlain, AliasPlainClass)
}

// Restart stops the adapter and starts it again with extra flags after the
// ones it first started with; none: as it first started.
func (a *Adapter) Restart(ctx context.Context, extra ...string) error {
	a.Stop()
	a.args = append(append([]string(nil), a.first...), extra...)
	return a.Start(ctx)
}

// Pid is the adapter process's id.
func (a *Adapter) Pid() int { return a.proc.Pid() }

// Binary is the path of the rukpak-kapp binary the harness built.
func (a *Adapter) Binary() string { return a.bin }

// Stop ends the adapter gracefully.
func (a *Adapter) Stop() { a.proc.Stop(10 * time.Second) }

// Kill ends the adapter at once, as a crash would.
func (a *Adapter) Kill() { a.proc.Kill() }
