package harness

import (
	"context"
	"fmt"

	kcv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgclient "carvel.dev/kapp-controller/pkg/apiserver/client/clientset/versioned"
	kcclient "carvel.dev/kapp-controller/pkg/client/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
)

// kctrl (kapp-controller's CLI module) is not served by the Go module
// proxy, so it cannot be built here. These make the API calls its list
// commands make (cli/pkg/kctrl/cmd/package/available/list.go and
// installed/list.go at v0.53.1), with the same clientsets, and return its
// table rows.

// PackageSummary is a row of `kctrl package available list`: one
// PackageMetadata.
type PackageSummary struct {
	Namespace, Name, DisplayName, ShortDescription string
}

// AvailablePackage is a row of `kctrl package available list -p NAME`.
type AvailablePackage struct {
	Namespace, Name, Version string
}

// InstalledPackage is a row of `kctrl package installed list`.
type InstalledPackage struct {
	Namespace, Name, PackageName, PackageVersion, Status, Message string
}

// KctrlAvailableList lists the PackageMetadatas of ns (all namespaces when
// empty), as `kctrl package available list [-A]` does.
func KctrlAvailableList(ctx context.Context, cfg *rest.Config, ns string) ([]PackageSummary, error) {
	c, err := pkgclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build packaging clientset: %w", err)
	}
	list, err := c.DataV1alpha1().PackageMetadatas(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list package metadatas: %w", err)
	}
	var out []PackageSummary
	for _, m := range list.Items {
		out = append(out, PackageSummary{Namespace: m.Namespace, Name: m.Name, DisplayName: m.Spec.DisplayName, ShortDescription: m.Spec.ShortDescription})
	}
	return out, nil
}

// KctrlAvailableVersions lists the Packages of refName in ns, as `kctrl
// package available list -p NAME` does: with a field selector, which only
// kapp-controller's aggregated API server understands.
func KctrlAvailableVersions(ctx context.Context, cfg *rest.Config, ns, refName string) ([]AvailablePackage, error) {
	c, err := pkgclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build packaging clientset: %w", err)
	}
	opts := metav1.ListOptions{FieldSelector: fields.Set{"spec.refName": refName}.String()}
	list, err := c.DataV1alpha1().Packages(ns).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list packages of %s: %w", refName, err)
	}
	var out []AvailablePackage
	for _, p := range list.Items {
		out = append(out, AvailablePackage{Namespace: p.Namespace, Name: p.Spec.RefName, Version: p.Spec.Version})
	}
	return out, nil
}

// KctrlInstalledList lists the PackageInstalls of ns, as `kctrl package
// installed list` does, with its status words and its message (the last
// condition's).
func KctrlInstalledList(ctx context.Context, cfg *rest.Config, ns string) ([]InstalledPackage, error) {
	c, err := kcclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build kapp-controller clientset: %w", err)
	}
	list, err := c.PackagingV1alpha1().PackageInstalls(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list package installs: %w", err)
	}
	var out []InstalledPackage
	for _, pi := range list.Items {
		row := InstalledPackage{Namespace: pi.Namespace, Name: pi.Name, PackageName: pi.Spec.PackageRef.RefName, PackageVersion: pi.Status.Version}
		if n := len(pi.Status.Conditions); n > 0 {
			row.Message = pi.Status.Conditions[n-1].Message
		}
		row.Status = pi.Status.FriendlyDescription
		switch {
		case pi.Spec.Canceled:
			row.Status = "Canceled"
		case pi.Spec.Paused:
			row.Status = "Paused"
		default:
			if s := kctrlStatus(pi.Status.Conditions); s != "" {
				row.Status = s
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// kctrlStatus is kctrl's word for the first condition it knows.
func kctrlStatus(conditions []kcv1alpha1.Condition) string {
	for _, c := range conditions {
		switch c.Type {
		case kcv1alpha1.ReconcileFailed:
			return "Reconcile failed"
		case kcv1alpha1.ReconcileSucceeded:
			return "Reconcile succeeded"
		case kcv1alpha1.DeleteFailed:
			return "Deletion failed"
		case kcv1alpha1.Reconciling:
			return "Reconciling"
		case kcv1alpha1.Deleting:
			return "Deleting"
		}
	}
	return ""
}
