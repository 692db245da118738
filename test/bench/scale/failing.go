package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// failingMain measures what failing objects cost the servers they fail
// against: n of every kind the adapter fetches for (Bundles on their own,
// v1alpha1 and v1alpha2 registry+v1 BundleDeployments, OperatorCatalogs)
// and every source (image with a tag that does not exist, a git repository
// and an http archive that do not), made at once on a control plane with
// the adapter as its own process and no kapp-controller (whose fetches
// would count too), then watched for window: the requests each server
// received per object and per minute, and the adapter's connections to
// each server (at most at once, and at the end). With -kinds, only those
// kinds (bundle, v1alpha1, v1alpha2, catalog). The servers count what they
// receive (harness.Traffic); only the adapter talks to them.
func failingMain(ctx context.Context, n int, window time.Duration, kinds string) int {
	env, err := harness.Start(ctx, harness.Options{KappControllerAPI: true, Adapter: true, Servers: true, DefaultGC: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmark: start local control plane:", err)
		return 1
	}
	defer env.Stop()
	servers := map[string]*harness.Traffic{"image": env.Registry.Traffic, "git": env.Git.Traffic, "http": env.Files.Traffic}
	for _, t := range servers {
		t.ResetPeak()
	}
	type group struct{ kind, source string }
	paths := map[group][]string{}
	wanted := func(kind string) bool { return kinds == "" || strings.Contains(","+kinds+",", ","+kind+",") }
	for i := range n {
		for _, source := range []string{"image", "git", "http"} {
			for _, kind := range []string{"bundle", "v1alpha1", "v1alpha2", "catalog"} {
				if !wanted(kind) || (kind == "catalog" && source != "image") {
					continue
				}
				name := fmt.Sprintf("failing-%s-%s-%03d", kind, source, i)
				if err := makeFailing(ctx, env, kind, source, name); err != nil {
					fmt.Fprintln(os.Stderr, "benchmark:", err)
					return 1
				}
				paths[group{kind, source}] = append(paths[group{kind, source}], name)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "%s: %d failing objects made; watching the servers for %s\n", time.Now().Format(time.TimeOnly), n*len(paths), window)
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return 1
	}
	minutes := window.Minutes()
	fmt.Printf("failing objects: %d of each kind and source, watched for %s (no kapp-controller: only the adapter asks the servers)\n\n", n, window)
	fmt.Println("| kind | source | requests per object per minute (mean) | most for one object |")
	fmt.Println("| --- | --- | --- | --- |")
	var groups []group
	for g := range paths {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].kind+groups[i].source < groups[j].kind+groups[j].source })
	for _, g := range groups {
		total, most := 0, 0
		for _, p := range paths[g] {
			r := servers[g.source].Requests(p)
			total, most = total+r, max(most, r)
		}
		fmt.Printf("| %s | %s | %.1f | %d in %s |\n", g.kind, g.source, float64(total)/float64(len(paths[g]))/minutes, most, window)
	}
	fmt.Println()
	for _, g := range groups {
		msg, err := failureMessage(ctx, env, g.kind, paths[g][0])
		if err != nil {
			msg = err.Error()
		}
		fmt.Printf("%s from %s, its condition at the end: %s\n", g.kind, g.source, msg)
	}
	fmt.Println()
	fmt.Println("| server | connections open at most | open at the end |")
	fmt.Println("| --- | --- | --- |")
	for _, source := range []string{"image", "git", "http"} {
		fmt.Printf("| %s | %d | %d |\n", source, servers[source].Peak(), servers[source].Open())
	}
	return 0
}

// makeFailing makes one object of kind whose source (of its kind) fails.
func makeFailing(ctx context.Context, env *harness.Env, kind, source, name string) error {
	var v1 rukpakv1alpha1.BundleSource
	var v2 rukpakv1alpha2.BundleSource
	switch source {
	case "image":
		ref := env.Registry.Host + "/" + name + ":no-such-tag"
		v1 = rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: ref}}
		v2 = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}}
	case "git":
		url := env.Git.URL(name)
		v1 = rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeGit, Git: &rukpakv1alpha1.GitSource{Repository: url, Ref: rukpakv1alpha1.GitRef{Branch: "main"}}}
		v2 = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeGit, Git: &rukpakv1alpha2.GitSource{Repository: url, Ref: rukpakv1alpha2.GitRef{Branch: "main"}}}
	case "http":
		url := env.Files.URL("/" + name + ".tgz")
		v1 = rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeHTTP, HTTP: &rukpakv1alpha1.HTTPSource{URL: url}}
		v2 = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}}
	}
	var obj client.Object
	switch kind {
	case "bundle":
		obj = &rukpakv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Source: v1}}
	case "v1alpha1":
		obj = &rukpakv1alpha1.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: rukpakv1alpha1.BundleDeploymentSpec{
			ProvisionerClassName: rukpakv1alpha1.OwnClassFor(rukpakv1alpha1.ClassRegistry),
			Template:             rukpakv1alpha1.BundleTemplate{Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassRegistry, Source: v1}}}}
	case "v1alpha2":
		obj = &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: rukpakv1alpha2.BundleDeploymentSpec{
			ProvisionerClassName: rukpakv1alpha2.ClassRegistry, InstallNamespace: "default", Source: v2}}
	case "catalog":
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
		obj = &catalogsv1alpha1.OperatorCatalog{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "operators"},
			Spec: catalogsv1alpha1.OperatorCatalogSpec{Image: env.Registry.Host + "/" + name + ":no-such-tag"}}
	}
	// The conversion webhook of the first API may not be trusted for a
	// moment after the adapter starts.
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if err = env.Client.Create(ctx, obj); err == nil {
			return nil
		}
	}
	return fmt.Errorf("create %s %s: %w", kind, name, err)
}

// failureMessage is the message of the condition that reports kind name's
// failure.
func failureMessage(ctx context.Context, env *harness.Env, kind, name string) (string, error) {
	var conds []metav1.Condition
	switch kind {
	case "bundle":
		b := &rukpakv1alpha1.Bundle{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, b); err != nil {
			return "", err
		}
		conds = b.Status.Conditions
	case "v1alpha1", "v1alpha2":
		bd := &rukpakv1alpha2.BundleDeployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, bd); err != nil {
			return "", err
		}
		conds = bd.Status.Conditions
	case "catalog":
		cat := &catalogsv1alpha1.OperatorCatalog{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: name, Name: "operators"}, cat); err != nil {
			return "", err
		}
		conds = cat.Status.Conditions
	}
	for _, c := range conds {
		if c.Status == metav1.ConditionFalse {
			return c.Type + " " + c.Reason + ": " + c.Message, nil
		}
	}
	return "no failing condition", nil
}
