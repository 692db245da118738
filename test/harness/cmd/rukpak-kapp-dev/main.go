package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

func main() {
	// The clients here log nothing worth reading (the processes' own logs
	// are in the harness's directory); without a logger controller-runtime
	// prints a warning with a stack trace instead.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cluster := os.Getenv(clusterVar); cluster {
	case "kubeconfig":
		if os.Getenv("KUBECONFIG") == "" {
			fmt.Fprintln(os.Stderr, "make run: CLUSTER=kubeconfig runs the adapter against the cluster KUBECONFIG names, and KUBECONFIG is not set")
			os.Exit(2)
		}
		err = runAgainstCluster(ctx)
	case "":
		if kc := os.Getenv("KUBECONFIG"); kc != "" {
			// A kubeconfig exported for other work is no request to touch
			// its cluster: nothing started here reads it.
			fmt.Printf("KUBECONFIG is set and left alone: make run starts its own local control plane (make run CLUSTER=kubeconfig runs the adapter against the cluster it names).\n")
			os.Unsetenv("KUBECONFIG")
		}
		err = runLocal(ctx)
	default:
		fmt.Fprintf(os.Stderr, "make run: CLUSTER=%s: the one cluster make run can be asked for is CLUSTER=kubeconfig (the cluster KUBECONFIG names)\n", cluster)
		os.Exit(2)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "make run: %v\n", err)
		os.Exit(1)
	}
}

// clusterVar carries make run's CLUSTER: "kubeconfig" asks for the cluster
// KUBECONFIG names; empty, the local control plane.
const clusterVar = "RUKPAK_KAPP_RUN_CLUSTER"

func runAgainstCluster(ctx context.Context) error {
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	fmt.Printf("CLUSTER=kubeconfig: running the adapter against the cluster KUBECONFIG names (kapp-controller must already run there).\n")
	cmd := exec.CommandContext(ctx, filepath.Join(root, "bin", "rukpak-kapp"), append([]string{"run"}, os.Args[1:]...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

func runLocal(ctx context.Context) error {
	start := time.Now()
	fmt.Println("starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (one fake node), kapp-controller, registries and rukpak-kapp on loopback...")
	// kapp-controller serves the packaging API from its own API server, as
	// in a cluster, when it can: that needs root (harness/packagingapi.go).
	// Without root the Packages are stand-in CRDs, which kctrl reads too,
	// except `kctrl package available list -p`, whose field selector only
	// kapp-controller's API server understands.
	packagingAPI := os.Geteuid() == 0
	if !packagingAPI {
		fmt.Println("not root: the packaging API is served as CRDs, not by kapp-controller's API server (`kctrl package available list -p` needs the latter; run make run as root for it)")
	}
	env, err := harness.Start(ctx, harness.Options{ControllerManager: true, FakeNodes: true, KappController: true, PackagingAPI: packagingAPI, Adapter: true, Servers: true})
	if err != nil {
		return err
	}
	defer env.Stop()
	fmt.Printf("local control plane up in %s; process logs in %s\n", time.Since(start).Round(time.Second), env.LogDir())

	ref, _, err := env.Registry.PushDir(filepath.Join(env.Root, "examples", "bundles", "plain-hello"), "examples/plain-hello:v1")
	if err != nil {
		return err
	}
	fmt.Printf("pushed examples/bundles/plain-hello as %s\n", ref)
	if err := applyExample(ctx, env, "plain-hello", "REGISTRY", env.Registry.Host); err != nil {
		return err
	}
	if err := applyHelmExample(ctx, env); err != nil {
		return err
	}
	fmt.Println("publishing an OLM catalog of three operators (test/testdata/registry-v1-corpus) as Carvel packages...")
	steps, err := env.ExampleCatalog(ctx)
	if err != nil {
		return err
	}
	fmt.Printf(`
The BundleDeployments are installed. Try:
  export KUBECONFIG=%s
  kubectl get bundledeployments
  kubectl get apps -n %s
  kubectl get configmap hello-settings -n default -o yaml
  kubectl get deployment helm-hello-hello-world -n default

The OperatorCatalog %s/examples is published as Carvel packages. With kctrl:
`, env.ControlPlane.Kubeconfig, harness.SystemNamespace, harness.ExampleCatalogNamespace)
	for _, step := range steps {
		fmt.Println("  " + step.Command)
	}
	fmt.Printf(`  kubectl get bundledeployments   # the install is a BundleDeployment too

Press Ctrl-C to stop everything.
`)
	<-ctx.Done()
	fmt.Println("\nstopping...")
	return nil
}

// applyHelmExample serves examples/charts as a chart archive and installs
// examples/helm-hello.yaml from it.
func applyHelmExample(ctx context.Context, env *harness.Env) error {
	tgz, err := harness.TarGz(filepath.Join(env.Root, "examples", "charts"))
	if err != nil {
		return err
	}
	url := env.Files.Put("/charts/hello-world-0.1.0.tgz", tgz)
	fmt.Printf("serving examples/charts as %s\n", url)
	return applyExample(ctx, env, "helm-hello", "FILES", env.Files.Host)
}

// applyExample applies examples/<name>.yaml with placeholder replaced by
// the address of a harness server, and prints its status until Installed.
func applyExample(ctx context.Context, env *harness.Env, name, placeholder, host string) error {
	manifest, err := os.ReadFile(filepath.Join(env.Root, "examples", name+".yaml"))
	if err != nil {
		return err
	}
	manifest = bytes.ReplaceAll(manifest, []byte(placeholder), []byte(host))
	if _, err := harness.ApplyYAML(ctx, env.Client, manifest); err != nil {
		return err
	}
	fmt.Printf("applied examples/%s.yaml; status:\n", name)
	return watchUntilInstalled(ctx, env.Client, name)
}

// watchUntilInstalled prints each change of the conditions until Installed
// is True.
func watchUntilInstalled(ctx context.Context, c client.Client, name string) error {
	last := ""
	for {
		bd := &rukpakv1alpha2.BundleDeployment{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, bd); err != nil {
			return err
		}
		line := ""
		for _, t := range []string{rukpakv1alpha2.TypeUnpacked, rukpakv1alpha2.TypeInstalled, rukpakv1alpha2.TypeHealthy} {
			if cond := apimeta.FindStatusCondition(bd.Status.Conditions, t); cond != nil {
				line += fmt.Sprintf("  %s=%s (%s): %s\n", t, cond.Status, cond.Reason, cond.Message)
			}
		}
		if line != last {
			fmt.Print(line, "  --\n")
			last = line
		}
		if installed := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled); installed != nil && installed.Status == "True" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
