package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	kcv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	kcclient "carvel.dev/kapp-controller/pkg/client/clientset/versioned"
	versionsv1alpha1 "carvel.dev/vendir/pkg/vendir/versions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// The calls kctrl v0.53.1 makes for `package repository add`, `package
// install` and `package installed update` (cli/pkg/kctrl/cmd/package/
// repository/add_or_update.go, installed/create_or_update.go,
// installed/created_resource_annotations.go), made with the same
// clientsets: kctrl's module is not served, so it cannot be built here.

// kctrlPackageAnnotation marks what kctrl made for an install, with the
// value <install>-<namespace>; the Tanzu CLI's key is written alongside it.
const (
	kctrlPackageAnnotation = "packaging.carvel.dev/package"
	tanzuPackageAnnotation = "tkg.tanzu.vmware.com/tanzu-package"
	kctrlValuesKey         = "values.yaml"
)

// KctrlRepositoryAdd makes the PackageRepository `kctrl package repository
// add -r NAME --url URL -n NS` makes (an imgpkg bundle, nothing else), and
// waits, as kctrl does, for ReconcileSucceeded or ReconcileFailed.
func KctrlRepositoryAdd(ctx context.Context, cfg *rest.Config, ns, name, url string) error {
	kc, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	repo := &packagingv1alpha1.PackageRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: packagingv1alpha1.PackageRepositorySpec{Fetch: &packagingv1alpha1.PackageRepositoryFetch{
			ImgpkgBundle: &kcv1alpha1.AppFetchImgpkgBundle{Image: url},
		}},
	}
	repos := kc.PackagingV1alpha1().PackageRepositories(ns)
	_, err = repos.Create(ctx, repo, metav1.CreateOptions{})
	if err := made(err, func() (metav1.Object, bool, error) {
		got, err := repos.Get(ctx, name, metav1.GetOptions{})
		return got, err == nil && got.Spec.Fetch != nil && got.Spec.Fetch.ImgpkgBundle != nil && got.Spec.Fetch.ImgpkgBundle.Image == url, err
	}); err != nil {
		return fmt.Errorf("create PackageRepository %s: %w", name, err)
	}
	return kctrlWaitRepository(ctx, kc, ns, name)
}

// made is the outcome of a create that returned err. An AlreadyExists
// for an object that ours finds is the one this call asks for (its mark,
// its values) is no failure: CI once saw a 409 on a create of a name only
// one call makes, whose cause its page did not show. Such a find is said
// on stderr with the object's creation time, so that the next one shows
// where the object came from. Anything else already there is a failure.
func made(err error, ours func() (metav1.Object, bool, error)) error {
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	obj, same, getErr := ours()
	if getErr != nil {
		return fmt.Errorf("%w (and reading it: %w)", err, getErr)
	}
	if !same {
		return fmt.Errorf("%w, and it is not what this call asked for", err)
	}
	fmt.Fprintf(os.Stderr, "harness: %v; it is this call's (created %s, uid %s), taken as made\n", err, obj.GetCreationTimestamp().UTC().Format(time.RFC3339Nano), obj.GetUID())
	return nil
}

// KctrlInstall is one `kctrl package install -i NAME -p PACKAGE --version
// VERSION [--values-file F] -n NAMESPACE`.
type KctrlInstall struct {
	Namespace, Name, Package, Version string
	// Values is the content of the values file; nil for none.
	Values []byte
}

// KctrlPackageInstall makes what kctrl makes without
// --service-account-name: a ServiceAccount, a ClusterRole allowing
// everything and its binding, a values Secret when there are values, and
// the PackageInstall (every prerelease eligible, as kctrl always asks);
// then it waits as kctrl waits. The error is kctrl's failure: the
// PackageInstall's useful error message when it reports ReconcileFailed.
func KctrlPackageInstall(ctx context.Context, cfg *rest.Config, in KctrlInstall) error {
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kc, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	id := in.Name + "-" + in.Namespace
	marks := map[string]string{kctrlPackageAnnotation: id, tanzuPackageAnnotation: id}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: id + "-sa", Namespace: in.Namespace, Annotations: marks}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: id + "-cluster-role", Annotations: marks},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: id + "-cluster-rolebinding", Annotations: marks},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: in.Namespace}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
	_, err = core.CoreV1().ServiceAccounts(in.Namespace).Create(ctx, sa, metav1.CreateOptions{})
	if err := made(err, func() (metav1.Object, bool, error) {
		got, err := core.CoreV1().ServiceAccounts(in.Namespace).Get(ctx, sa.Name, metav1.GetOptions{})
		return got, err == nil && got.Annotations[kctrlPackageAnnotation] == id, err
	}); err != nil {
		return fmt.Errorf("create ServiceAccount %s: %w", sa.Name, err)
	}
	_, err = core.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	if err := made(err, func() (metav1.Object, bool, error) {
		got, err := core.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
		return got, err == nil && got.Annotations[kctrlPackageAnnotation] == id, err
	}); err != nil {
		return fmt.Errorf("create ClusterRole %s: %w", role.Name, err)
	}
	_, err = core.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	if err := made(err, func() (metav1.Object, bool, error) {
		got, err := core.RbacV1().ClusterRoleBindings().Get(ctx, binding.Name, metav1.GetOptions{})
		return got, err == nil && got.Annotations[kctrlPackageAnnotation] == id, err
	}); err != nil {
		return fmt.Errorf("create ClusterRoleBinding %s: %w", binding.Name, err)
	}
	pi := &packagingv1alpha1.PackageInstall{
		ObjectMeta: metav1.ObjectMeta{Name: in.Name, Namespace: in.Namespace, Annotations: map[string]string{}},
		Spec: packagingv1alpha1.PackageInstallSpec{
			ServiceAccountName: sa.Name,
			PackageRef: &packagingv1alpha1.PackageRef{RefName: in.Package, VersionSelection: &versionsv1alpha1.VersionSelectionSemver{
				Constraints: in.Version, Prereleases: &versionsv1alpha1.VersionSelectionSemverPrereleases{},
			}},
		},
	}
	for _, k := range []string{kctrlPackageAnnotation, tanzuPackageAnnotation} {
		pi.Annotations[k+"-ClusterRole"] = role.Name
		pi.Annotations[k+"-ClusterRoleBinding"] = binding.Name
		pi.Annotations[k+"-ServiceAccount"] = sa.Name
	}
	if in.Values != nil {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: id + "-values", Namespace: in.Namespace, Annotations: marks},
			Data: map[string][]byte{kctrlValuesKey: in.Values}}
		_, err = core.CoreV1().Secrets(in.Namespace).Create(ctx, secret, metav1.CreateOptions{})
		if err := made(err, func() (metav1.Object, bool, error) {
			got, err := core.CoreV1().Secrets(in.Namespace).Get(ctx, secret.Name, metav1.GetOptions{})
			return got, err == nil && got.Annotations[kctrlPackageAnnotation] == id && string(got.Data[kctrlValuesKey]) == string(in.Values), err
		}); err != nil {
			return fmt.Errorf("create Secret %s: %w", secret.Name, err)
		}
		pi.Spec.Values = []packagingv1alpha1.PackageInstallValues{{SecretRef: &packagingv1alpha1.PackageInstallValuesSecretRef{Name: secret.Name}}}
		for _, k := range []string{kctrlPackageAnnotation, tanzuPackageAnnotation} {
			pi.Annotations[k+"-Secret"] = secret.Name
		}
	}
	_, err = kc.PackagingV1alpha1().PackageInstalls(in.Namespace).Create(ctx, pi, metav1.CreateOptions{})
	if err := made(err, func() (metav1.Object, bool, error) {
		got, err := kc.PackagingV1alpha1().PackageInstalls(in.Namespace).Get(ctx, in.Name, metav1.GetOptions{})
		return got, err == nil && got.Annotations[kctrlPackageAnnotation+"-ServiceAccount"] == sa.Name &&
			got.Spec.PackageRef != nil && got.Spec.PackageRef.RefName == in.Package, err
	}); err != nil {
		return fmt.Errorf("create PackageInstall %s: %w", in.Name, err)
	}
	return kctrlWaitInstall(ctx, kc, in.Namespace, in.Name)
}

// KctrlInstalledUpdate is `kctrl package installed update -i NAME
// --version VERSION -n NS`: the constraints overwritten (nothing checked),
// the PackageInstall updated, then kctrl's wait.
func KctrlInstalledUpdate(ctx context.Context, cfg *rest.Config, ns, name, version string) error {
	kc, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := kctrlSetVersion(ctx, kc, ns, name, version); err != nil {
		return err
	}
	return kctrlWaitInstall(ctx, kc, ns, name)
}

// KctrlInstalledUpdateNoWait is KctrlInstalledUpdate with `--wait=false`.
// kctrl's update is a read and a write: when kapp-controller wrote the
// PackageInstall's status in between, the write is refused with a conflict
// and the user runs the command again, as this does.
func KctrlInstalledUpdateNoWait(ctx context.Context, cfg *rest.Config, ns, name, version string) error {
	kc, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return kctrlSetVersion(ctx, kc, ns, name, version)
}

// kctrlSetVersion is kctrl's read and write of the PackageInstall's
// version constraints, run again on a conflict.
func kctrlSetVersion(ctx context.Context, kc kcclient.Interface, ns, name, version string) error {
	pis := kc.PackagingV1alpha1().PackageInstalls(ns)
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		pi, err := pis.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pi.Spec.PackageRef == nil || pi.Spec.PackageRef.VersionSelection == nil {
			return fmt.Errorf("PackageInstall %s has no version selection to update", name)
		}
		pi.Spec.PackageRef.VersionSelection.Constraints = version
		if _, err := pis.Update(ctx, pi, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update PackageInstall %s: %w", name, err)
		}
		return nil
	})
}

// KctrlInstalledPause is the JSON patch of `kctrl package installed
// pause` (paused) and of `kick`'s second half (not paused), which kctrl's
// update with values makes around its change.
func KctrlInstalledPause(ctx context.Context, cfg *rest.Config, ns, name string, paused bool) error {
	kc, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	op := []map[string]any{{"op": "add", "path": "/spec/paused", "value": true}}
	if !paused {
		op = []map[string]any{{"op": "remove", "path": "/spec/paused"}}
	}
	patch, _ := json.Marshal(op)
	_, err = kc.PackagingV1alpha1().PackageInstalls(ns).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{})
	return err
}

// KctrlInstalledDelete is `kctrl package installed delete -i NAME -n NS`:
// the PackageInstall deleted and waited for, then what kctrl made for it.
func KctrlInstalledDelete(ctx context.Context, cfg *rest.Config, ns, name string) error {
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kc, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := kc.PackagingV1alpha1().PackageInstalls(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kc.PackagingV1alpha1().PackageInstalls(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), client404(err)
	}); err != nil {
		return fmt.Errorf("wait for PackageInstall %s to be deleted: %w", name, err)
	}
	id := name + "-" + ns
	for _, del := range []func() error{
		func() error { return core.CoreV1().Secrets(ns).Delete(ctx, id+"-values", metav1.DeleteOptions{}) },
		func() error {
			return core.RbacV1().ClusterRoleBindings().Delete(ctx, id+"-cluster-rolebinding", metav1.DeleteOptions{})
		},
		func() error {
			return core.RbacV1().ClusterRoles().Delete(ctx, id+"-cluster-role", metav1.DeleteOptions{})
		},
		func() error { return core.CoreV1().ServiceAccounts(ns).Delete(ctx, id+"-sa", metav1.DeleteOptions{}) },
	} {
		if err := del(); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// client404 passes on a read's error unless it is NotFound.
func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func kctrlWaitRepository(ctx context.Context, kc kcclient.Interface, ns, name string) error {
	return kctrlWait(ctx, func(ctx context.Context) (int64, kcv1alpha1.GenericStatus, error) {
		r, err := kc.PackagingV1alpha1().PackageRepositories(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return 0, kcv1alpha1.GenericStatus{}, err
		}
		return r.Generation, r.Status.GenericStatus, nil
	})
}

func kctrlWaitInstall(ctx context.Context, kc kcclient.Interface, ns, name string) error {
	return kctrlWait(ctx, func(ctx context.Context) (int64, kcv1alpha1.GenericStatus, error) {
		pi, err := kc.PackagingV1alpha1().PackageInstalls(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return 0, kcv1alpha1.GenericStatus{}, err
		}
		app, err := kc.KappctrlV1alpha1().Apps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			app, err = nil, nil
		}
		if err != nil {
			return 0, kcv1alpha1.GenericStatus{}, err
		}
		return pi.Generation, installStatus(pi, app), nil
	})
}

// installStatus is the status a wait on pi reads, app its App (nil: none).
// kapp-controller v0.53.1 writes a PackageInstall's status from its App as
// the App is before it moves the App to a new Package version: a new
// generation can read as succeeded (or failed) with the old version's App,
// and kctrl's wait then returns before anything was deployed. So the App
// must be observed at the version the PackageInstall names, and its own
// status is the verdict. Without an App (no Package matches, say), or when
// the PackageInstall failed on its own (a downgrade stopped), the status
// is the PackageInstall's.
func installStatus(pi *packagingv1alpha1.PackageInstall, app *kcv1alpha1.App) kcv1alpha1.GenericStatus {
	switch {
	case app == nil, pi.Status.ObservedGeneration != pi.Generation:
		return pi.Status.GenericStatus
	case failed(pi.Status.GenericStatus) && pi.Status.UsefulErrorMessage != app.Status.UsefulErrorMessage:
		return pi.Status.GenericStatus
	case app.Annotations[appPackageVersion] != pi.Status.Version || app.Generation != app.Status.ObservedGeneration:
		return kcv1alpha1.GenericStatus{ObservedGeneration: -1}
	}
	st := app.Status.GenericStatus
	st.ObservedGeneration = pi.Generation
	return st
}

// failed says st reports ReconcileFailed.
func failed(st kcv1alpha1.GenericStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == kcv1alpha1.ReconcileFailed && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// appPackageVersion is the Package version kapp-controller made an App of
// a PackageInstall for.
const appPackageVersion = "packaging.carvel.dev/package-version"

// kctrlWait polls as kctrl's waits do, every second, until Reconciled
// says the current generation is done.
func kctrlWait(ctx context.Context, get func(context.Context) (int64, kcv1alpha1.GenericStatus, error)) error {
	var failed error
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		gen, st, err := get(ctx)
		if err != nil {
			return false, err
		}
		var done bool
		done, failed = Reconciled(gen, st)
		return done, nil
	})
	if err != nil {
		return err
	}
	return failed
}

// OperatorControllerTestdata is the testdata directory of the
// operator-controller module the OLM suites run (its test catalog and
// bundles).
func OperatorControllerTestdata(ctx context.Context, root string) (string, error) {
	e := &Env{Root: root}
	dir, err := e.moduleDir(ctx, operatorControllerModule, "github.com/operator-framework/operator-controller")
	if err != nil {
		return "", err
	}
	testdata := filepath.Join(dir, "testdata")
	if _, err := os.Stat(testdata); err != nil {
		return "", err
	}
	return testdata, nil
}

// KctrlRepositoryUpdate is `kctrl package repository update -r NAME --url
// URL -n NS`: the image replaced, then kctrl's wait.
func KctrlRepositoryUpdate(ctx context.Context, cfg *rest.Config, ns, name, url string) error {
	kc, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// A conflict with kapp-controller's status write is run again, as
	// KctrlInstalledUpdateNoWait says.
	repos := kc.PackagingV1alpha1().PackageRepositories(ns)
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		repo, err := repos.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		repo.Spec.Fetch = &packagingv1alpha1.PackageRepositoryFetch{ImgpkgBundle: &kcv1alpha1.AppFetchImgpkgBundle{Image: url}}
		if _, err := repos.Update(ctx, repo, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update PackageRepository %s: %w", name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	return kctrlWaitRepository(ctx, kc, ns, name)
}

// KctrlInstalledUpdateValues is `kctrl package installed update -i NAME
// --values-file F -n NS` for an install that has values: the PackageInstall
// paused (and its App seen paused), the values Secret rewritten, the
// PackageInstall resumed, then kctrl's wait.
func KctrlInstalledUpdateValues(ctx context.Context, cfg *rest.Config, ns, name string, values []byte) error {
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kc, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	pi, err := kc.PackagingV1alpha1().PackageInstalls(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if len(pi.Spec.Values) != 1 || pi.Spec.Values[0].SecretRef == nil {
		return fmt.Errorf("PackageInstall %s has no values Secret to update", name)
	}
	if err := KctrlInstalledPause(ctx, cfg, ns, name, true); err != nil {
		return err
	}
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		app, err := kc.KappctrlV1alpha1().Apps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return app.Generation == app.Status.ObservedGeneration && app.Status.FriendlyDescription == "Canceled/paused", nil
	}); err != nil {
		return fmt.Errorf("wait for App %s to be paused: %w", name, err)
	}
	secret, err := core.CoreV1().Secrets(ns).Get(ctx, pi.Spec.Values[0].SecretRef.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	secret.Data = map[string][]byte{kctrlValuesKey: values}
	if _, err := core.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update Secret %s: %w", secret.Name, err)
	}
	if err := KctrlInstalledPause(ctx, cfg, ns, name, false); err != nil {
		return err
	}
	return kctrlWaitInstall(ctx, kc, ns, name)
}
