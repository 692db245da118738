package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

const systemLabel = "bench.rukpak-kapp.io/system"

// system is one way of installing the same N bundles.
type system interface {
	Name() string
	// Start (re)starts the system's own processes, so their peak RSS is
	// this run's, and returns them.
	Start(ctx context.Context) (procSet, error)
	// Object is what the benchmark creates for bundle i.
	Object(i int, ref string) (client.Object, error)
	List() client.ObjectList
	Done(obj client.Object) bool
	// Change points the object at another bundle.
	Change(obj client.Object, ref string)
	Stop()
}

func namespaceOf(s system) string { return "bench-" + s.Name() }

func bundleDeployment(name, system, ns, ref string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{systemLabel: system}},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			InstallNamespace:     ns,
			ProvisionerClassName: rukpakv1alpha2.ClassPlain,
			Source:               rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}},
		},
	}
}

func bdInstalled(obj client.Object) bool {
	bd := obj.(*rukpakv1alpha2.BundleDeployment)
	for _, c := range bd.Status.Conditions {
		if c.Type == rukpakv1alpha2.TypeInstalled {
			// rukpak v0.24.0 leaves the condition's observedGeneration unset.
			return c.Status == metav1.ConditionTrue && max(c.ObservedGeneration, bd.Status.ObservedGeneration) == bd.Generation
		}
	}
	return false
}

// rukpakKapp is the adapter with kapp-controller.
type rukpakKapp struct{ env *harness.Env }

func (rukpakKapp) Name() string { return "rukpak-kapp" }

func (s rukpakKapp) Start(ctx context.Context) (procSet, error) {
	s.env.Adapter.Stop()
	if err := restartKappController(ctx, s.env); err != nil {
		return nil, err
	}
	if err := s.env.Adapter.Start(ctx); err != nil {
		return nil, fmt.Errorf("start adapter: %w", err)
	}
	return procSet{"adapter": {s.env.Adapter.Pid()}, "kapp-controller": s.env.KappController.Pids()}, nil
}

func (s rukpakKapp) Object(i int, ref string) (client.Object, error) {
	return bundleDeployment(fmt.Sprintf("rk-%04d", i), s.Name(), namespaceOf(s), ref), nil
}
func (rukpakKapp) List() client.ObjectList     { return &rukpakv1alpha2.BundleDeploymentList{} }
func (rukpakKapp) Done(obj client.Object) bool { return bdInstalled(obj) }
func (rukpakKapp) Change(obj client.Object, ref string) {
	obj.(*rukpakv1alpha2.BundleDeployment).Spec.Source.Image.Ref = ref
}
func (s rukpakKapp) Stop() { s.env.Adapter.Stop() }

// floor is the same Apps written directly: kapp-controller's own cost.
type floor struct{ env *harness.Env }

func (floor) Name() string { return "floor" }

func (s floor) Start(ctx context.Context) (procSet, error) {
	if err := restartKappController(ctx, s.env); err != nil {
		return nil, err
	}
	return procSet{"kapp-controller": s.env.KappController.Pids()}, nil
}

// Object is exactly the App the adapter would write, minus its owner.
func (s floor) Object(i int, ref string) (client.Object, error) {
	bd := bundleDeployment(fmt.Sprintf("fl-%04d", i), s.Name(), namespaceOf(s), ref)
	app, err := translate.App(bd, translate.Config{
		SystemNamespace: harness.SystemNamespace, ServiceAccountName: "rukpak-kapp-installer",
		SyncPeriod: 10 * time.Minute, BranchSyncPeriod: time.Minute,
	}, nil)
	if err != nil {
		return nil, err
	}
	app.OwnerReferences = nil
	app.Labels[systemLabel] = s.Name()
	return app, nil
}
func (floor) List() client.ObjectList { return &kappctrlv1alpha1.AppList{} }
func (floor) Done(obj client.Object) bool {
	app := obj.(*kappctrlv1alpha1.App)
	return app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
		app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded
}
func (floor) Change(obj client.Object, ref string) {
	obj.(*kappctrlv1alpha1.App).Spec.Fetch[0].Image.URL = ref
}
func (floor) Stop() {}

// rukpak is rukpak v0.24.0's cmd/core, run out of cluster.
type rukpak struct {
	env  *harness.Env
	proc *exec.Cmd
}

func (*rukpak) Name() string { return "rukpak" }

func (s *rukpak) Start(ctx context.Context) (procSet, error) {
	s.env.Adapter.Stop()
	// rukpak would never remove the adapter's finalizer.
	if err := s.withoutFinalizerPolicy(ctx); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.env.Dir, "rukpak")
	for _, d := range []string{"storage", "unpack"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(s.env.Dir, "logs", "rukpak-core.log"))
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	s.proc = exec.Command(filepath.Join(s.env.Root, "bin", "rukpak-core"),
		"--kubeconfig", s.env.ControlPlane.Kubeconfig,
		"--system-namespace", harness.SystemNamespace,
		"--provisioner-storage-dir", filepath.Join(dir, "storage"),
		"--unpack-cache-dir", filepath.Join(dir, "unpack"),
		"--http-bind-address", addr, "--http-external-address", "http://"+addr,
		"--health-probe-bind-address", "0")
	s.proc.Stdout, s.proc.Stderr = log, log
	s.proc.Env = harness.ProcessEnv()
	if err := s.proc.Start(); err != nil {
		return nil, fmt.Errorf("start rukpak core (run make tools): %w", err)
	}
	return procSet{"rukpak": {s.proc.Process.Pid}}, nil
}

func (s *rukpak) Object(i int, ref string) (client.Object, error) {
	return bundleDeployment(fmt.Sprintf("rp-%04d", i), s.Name(), namespaceOf(s), ref), nil
}
func (*rukpak) List() client.ObjectList     { return &rukpakv1alpha2.BundleDeploymentList{} }
func (*rukpak) Done(obj client.Object) bool { return bdInstalled(obj) }
func (*rukpak) Change(obj client.Object, ref string) {
	obj.(*rukpakv1alpha2.BundleDeployment).Spec.Source.Image.Ref = ref
}
func (s *rukpak) Stop() {
	if s.proc != nil && s.proc.Process != nil {
		_ = s.proc.Process.Kill()
		_ = s.proc.Wait()
	}
	if err := s.env.InstallAdmission(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "benchmark: re-binding the finalizer policy after rukpak:", err)
	}
}

// withoutFinalizerPolicy unbinds config/admission's policy and waits until
// the API server no longer applies it.
func (s *rukpak) withoutFinalizerPolicy(ctx context.Context) error {
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "rukpak-kapp-uninstall-finalizer"}}
	if err := s.env.Client.Delete(ctx, binding); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("unbind the finalizer policy: %w", err)
	}
	for range 120 {
		probe := bundleDeployment("rp-probe", s.Name(), namespaceOf(s), "127.0.0.1/probe:v1")
		if err := s.env.Client.Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if len(probe.Finalizers) == 0 {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("the finalizer policy still applies 30s after it was unbound")
}

func restartKappController(ctx context.Context, env *harness.Env) error {
	env.KappController.Stop()
	if err := env.KappController.Start(ctx); err != nil {
		return fmt.Errorf("restart kapp-controller: %w", err)
	}
	return nil
}
