package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
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

func bundleDeployment(name, system, class, ns, ref string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{systemLabel: system}},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			InstallNamespace:     ns,
			ProvisionerClassName: class,
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

// rukpakKapp is the adapter with kapp-controller. Its BundleDeployments use
// the alias class the benchmark's adapter claims, so rukpak (which claims
// the built-in class) runs alongside it, and its kapp-controller reconciles
// only the Apps of the system namespace, so the floor's are not its work.
// With shards > 1 the adapter spreads the Apps over that many app
// namespaces (config/sharding), each with a kapp-controller of its own, and
// the system namespace's kapp-controller is not run.
type rukpakKapp struct {
	env    *harness.Env
	shards int
	kcs    []*harness.KappController
}

func (*rukpakKapp) Name() string { return "rukpak-kapp" }

func (s *rukpakKapp) Start(ctx context.Context) (procSet, error) {
	s.env.Adapter.Stop()
	if s.shards <= 1 {
		if err := restartKappController(ctx, s.env); err != nil {
			return nil, err
		}
		if err := s.env.Adapter.Start(ctx); err != nil {
			return nil, fmt.Errorf("start adapter: %w", err)
		}
		return procSet{"adapter": {s.env.Adapter.Pid()}, "kapp-controller": s.env.KappController.Pids()}, nil
	}
	s.env.KappController.Stop()
	namespaces, err := appNamespaces(ctx, s.env, s.shards)
	if err != nil {
		return nil, err
	}
	procs := procSet{}
	for _, ns := range namespaces {
		kc, err := s.env.StartKappController(ctx, "kapp-controller-"+ns, ns)
		if err != nil {
			return nil, err
		}
		s.kcs = append(s.kcs, kc)
		procs["kapp-controller"] = append(procs["kapp-controller"], kc.Pids()...)
	}
	if err := s.env.Adapter.Restart(ctx, "--app-namespaces", strings.Join(namespaces, ",")); err != nil {
		return nil, fmt.Errorf("start adapter: %w", err)
	}
	procs["adapter"] = []int{s.env.Adapter.Pid()}
	return procs, nil
}

func (s *rukpakKapp) Object(i int, ref string) (client.Object, error) {
	return bundleDeployment(fmt.Sprintf("rk-%04d", i), s.Name(), harness.AliasPlainClass, namespaceOf(s), ref), nil
}
func (*rukpakKapp) List() client.ObjectList     { return &rukpakv1alpha2.BundleDeploymentList{} }
func (*rukpakKapp) Done(obj client.Object) bool { return bdInstalled(obj) }
func (*rukpakKapp) Change(obj client.Object, ref string) {
	obj.(*rukpakv1alpha2.BundleDeployment).Spec.Source.Image.Ref = ref
}
func (s *rukpakKapp) Stop() {
	s.env.Adapter.Stop()
	for _, kc := range s.kcs {
		kc.Stop()
	}
}

// appNamespaces makes n app namespaces as config/sharding makes its two:
// the same objects, from its first namespace's file with the name changed.
func appNamespaces(ctx context.Context, env *harness.Env, n int) ([]string, error) {
	const example = "rukpak-apps-0"
	tmpl, err := os.ReadFile(filepath.Join(env.Root, "config", "sharding", "app-namespaces", example+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("read config/sharding: %w", err)
	}
	var names []string
	for i := range n {
		name := fmt.Sprintf("rukpak-apps-%d", i)
		if _, err := harness.ApplyYAML(ctx, env.Client, bytes.ReplaceAll(tmpl, []byte(example), []byte(name))); err != nil {
			return nil, fmt.Errorf("make app namespace %s: %w", name, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// floorApps is where the floor's Apps live, apart from the adapter's; with
// shards, floorApps-0, floorApps-1 and so on.
const floorApps = "bench-floor-apps"

// floor is the same Apps written directly, reconciled by a kapp-controller
// of its own (one per namespace with shards): kapp-controller's own cost.
type floor struct {
	env    *harness.Env
	shards int
	kcs    []*harness.KappController
}

func (*floor) Name() string { return "floor" }

func (s *floor) namespaces() []string {
	if s.shards <= 1 {
		return []string{floorApps}
	}
	var out []string
	for i := range s.shards {
		out = append(out, fmt.Sprintf("%s-%d", floorApps, i))
	}
	return out
}

func (s *floor) Start(ctx context.Context) (procSet, error) {
	procs := procSet{}
	for i, name := range s.namespaces() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := s.env.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
			return nil, err
		}
		// The same rights as config/rbac's installer account.
		if err := s.env.ClusterAdminAccount(ctx, name, installer); err != nil {
			return nil, err
		}
		kcName := "kapp-controller-floor"
		if s.shards > 1 {
			kcName = fmt.Sprintf("kapp-controller-floor-%d", i)
		}
		kc, err := s.env.StartKappController(ctx, kcName, name)
		if err != nil {
			return nil, err
		}
		s.kcs = append(s.kcs, kc)
		procs["kapp-controller"] = append(procs["kapp-controller"], kc.Pids()...)
	}
	return procs, nil
}

const installer = "rukpak-kapp-installer"

// Object is exactly the App the adapter would write, minus its owner.
func (s *floor) Object(i int, ref string) (client.Object, error) {
	bd := bundleDeployment(fmt.Sprintf("fl-%04d", i), s.Name(), rukpakv1alpha2.ClassPlain, namespaceOf(s), ref)
	cfg := translate.Config{
		SystemNamespace: floorApps, ServiceAccountName: installer,
		SyncPeriod: 10 * time.Minute, BranchSyncPeriod: time.Minute,
	}
	if s.shards > 1 {
		cfg.AppNamespaces = s.namespaces()
		cfg.AppNamespace = translate.Placement(cfg, bd.Name)
	}
	app, err := translate.AppInStyle(bd, cfg, nil, translate.StyleAsBundled)
	if err != nil {
		return nil, err
	}
	app.OwnerReferences = nil
	app.Labels[systemLabel] = s.Name()
	return app, nil
}
func (*floor) List() client.ObjectList { return &kappctrlv1alpha1.AppList{} }
func (*floor) Done(obj client.Object) bool {
	app := obj.(*kappctrlv1alpha1.App)
	return app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
		app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded
}
func (*floor) Change(obj client.Object, ref string) {
	obj.(*kappctrlv1alpha1.App).Spec.Fetch[0].Image.URL = ref
}
func (s *floor) Stop() {
	for _, kc := range s.kcs {
		kc.Stop()
	}
}

// rukpak is rukpak v0.24.0's cmd/core, run out of cluster by the harness.
type rukpak struct {
	env  *harness.Env
	proc *harness.Rukpak
}

func (*rukpak) Name() string { return "rukpak" }

func (s *rukpak) Start(ctx context.Context) (procSet, error) {
	var err error
	// Plain bundles only: the helm provisioner would only add idle cost.
	if s.proc, err = s.env.StartRukpak(ctx, false); err != nil {
		return nil, fmt.Errorf("start rukpak core: %w", err)
	}
	return procSet{"rukpak": s.proc.Pids()}, nil
}

func (s *rukpak) Object(i int, ref string) (client.Object, error) {
	return bundleDeployment(fmt.Sprintf("rp-%04d", i), s.Name(), rukpakv1alpha2.ClassPlain, namespaceOf(s), ref), nil
}
func (*rukpak) List() client.ObjectList     { return &rukpakv1alpha2.BundleDeploymentList{} }
func (*rukpak) Done(obj client.Object) bool { return bdInstalled(obj) }
func (*rukpak) Change(obj client.Object, ref string) {
	obj.(*rukpakv1alpha2.BundleDeployment).Spec.Source.Image.Ref = ref
}
func (s *rukpak) Stop() {
	if s.proc != nil {
		s.proc.Stop()
	}
}

func restartKappController(ctx context.Context, env *harness.Env) error {
	env.KappController.Stop()
	if err := env.KappController.Start(ctx); err != nil {
		return fmt.Errorf("restart kapp-controller: %w", err)
	}
	return nil
}
