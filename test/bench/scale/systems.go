package main

import (
	"context"
	"fmt"
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
// the built-in class) runs beside it, and its kapp-controller reconciles
// only the Apps of the system namespace, so the floor's are not its work.
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
	return bundleDeployment(fmt.Sprintf("rk-%04d", i), s.Name(), harness.AliasPlainClass, namespaceOf(s), ref), nil
}
func (rukpakKapp) List() client.ObjectList     { return &rukpakv1alpha2.BundleDeploymentList{} }
func (rukpakKapp) Done(obj client.Object) bool { return bdInstalled(obj) }
func (rukpakKapp) Change(obj client.Object, ref string) {
	obj.(*rukpakv1alpha2.BundleDeployment).Spec.Source.Image.Ref = ref
}
func (s rukpakKapp) Stop() { s.env.Adapter.Stop() }

// floorApps is where the floor's Apps live, apart from the adapter's.
const floorApps = "bench-floor-apps"

// floor is the same Apps written directly, reconciled by a kapp-controller
// of its own: kapp-controller's own cost.
type floor struct {
	env *harness.Env
	kc  *harness.KappController
}

func (*floor) Name() string { return "floor" }

func (s *floor) Start(ctx context.Context) (procSet, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floorApps}}
	if err := s.env.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return nil, err
	}
	// The same rights as config/rbac's installer account.
	if err := s.env.ClusterAdminAccount(ctx, floorApps, installer); err != nil {
		return nil, err
	}
	var err error
	if s.kc, err = s.env.StartKappController(ctx, "kapp-controller-floor", floorApps); err != nil {
		return nil, err
	}
	return procSet{"kapp-controller": s.kc.Pids()}, nil
}

const installer = "rukpak-kapp-installer"

// Object is exactly the App the adapter would write, minus its owner.
func (s *floor) Object(i int, ref string) (client.Object, error) {
	bd := bundleDeployment(fmt.Sprintf("fl-%04d", i), s.Name(), rukpakv1alpha2.ClassPlain, namespaceOf(s), ref)
	app, err := translate.AppInStyle(bd, translate.Config{
		SystemNamespace: floorApps, ServiceAccountName: installer,
		SyncPeriod: 10 * time.Minute, BranchSyncPeriod: time.Minute,
	}, nil, translate.StyleAsBundled)
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
	if s.kc != nil {
		s.kc.Stop()
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
