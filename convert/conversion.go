package convert

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// undeclaredConversion is a CRD that ships with a conversion webhook the
// CSV does not declare (kubebuilder scaffolding leaves one in, pointing at
// a Service in a namespace like "system"), so no certificate or Service is
// made for it as it stands.
type undeclaredConversion struct {
	crd      *unstructured.Unstructured
	service  string // namespace/name it names
	stored   string
	others   []string // the other served versions, which need the webhook
	path     string
	port     int64
	versions []any // conversionReviewVersions
}

// undeclaredConversions settles each CRD whose conversion webhook the CSV
// does not declare, by what kube-apiserver does with a webhook that does
// not exist (test/api/crdconversion_test.go):
//   - with one version it never calls the webhook, so the CRD works; the
//     dead stanza is dropped, so the object says what really happens.
//   - with several it serves only the stored version; every read or write
//     at another one fails. When the operator serves webhooks, the
//     conversion is pointed at its generated webhook Service (the
//     operator's webhook server is where it would be served); otherwise
//     the bundle is refused, naming what would fail, in one problem.
func (g *generator) undeclaredConversions(p *problems, crds []*unstructured.Unstructured) {
	declared := map[string]bool{}
	for _, w := range g.csv.Spec.WebhookDefinitions {
		for _, c := range w.ConversionCRDs {
			declared[c] = true
		}
	}
	var unserved []undeclaredConversion
	for _, crd := range crds {
		strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
		if strategy != "Webhook" || declared[crd.GetName()] {
			continue
		}
		u := readUndeclared(crd)
		if len(u.others) == 0 {
			unstructured.RemoveNestedField(crd.Object, "spec", "conversion")
			g.notes = append(g.notes, fmt.Sprintf("CustomResourceDefinition %s: its conversion webhook (service %s), which the ClusterServiceVersion does not declare, is dropped: with the single served version %s the API server never calls it", crd.GetName(), u.service, u.stored))
			continue
		}
		dep, ok := g.conversionServer(u)
		if !ok {
			unserved = append(unserved, u)
			continue
		}
		if !allNamespaces(g.targets) {
			p.addf("CustomResourceDefinition %s converts between versions with the webhook server of Deployment %s, which then needs to watch all namespaces", crd.GetName(), dep)
			continue
		}
		if keep, _, _ := unstructured.NestedBool(crd.Object, "spec", "preserveUnknownFields"); keep {
			p.addf("CustomResourceDefinition %s sets preserveUnknownFields, which a conversion webhook does not allow", crd.GetName())
			continue
		}
		served := g.served[dep]
		port := served.ports[0].Port
		for _, sp := range served.ports {
			if int64(sp.Port) == u.port {
				port = sp.Port
			}
		}
		_ = unstructured.SetNestedMap(crd.Object, map[string]any{
			"strategy": "Webhook",
			"webhook": map[string]any{
				"conversionReviewVersions": u.versions,
				"clientConfig": map[string]any{
					"caBundle": base64.StdEncoding.EncodeToString(served.caBundle),
					"service": map[string]any{
						"namespace": g.installNS, "name": served.service,
						"path": u.path, "port": int64(port),
					},
				},
			},
		}, "spec", "conversion")
		g.notes = append(g.notes, fmt.Sprintf("CustomResourceDefinition %s: its conversion webhook (service %s), which the ClusterServiceVersion does not declare, is pointed at the webhook Service %s/%s of Deployment %s (path %s), where the operator serves its webhooks", crd.GetName(), u.service, g.installNS, served.service, dep, u.path))
	}
	if len(unserved) > 0 {
		p.addf("%s", describeUnserved(unserved))
	}
}

func readUndeclared(crd *unstructured.Unstructured) undeclaredConversion {
	u := undeclaredConversion{crd: crd, path: "/", port: 443, versions: []any{"v1"}}
	webhook, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook")
	ns, _, _ := unstructured.NestedString(webhook, "clientConfig", "service", "namespace")
	name, _, _ := unstructured.NestedString(webhook, "clientConfig", "service", "name")
	u.service = ns + "/" + name
	if path, ok, _ := unstructured.NestedString(webhook, "clientConfig", "service", "path"); ok && path != "" {
		u.path = path
	}
	if port, ok, _ := unstructured.NestedInt64(webhook, "clientConfig", "service", "port"); ok {
		u.port = port
	}
	if vs, ok, _ := unstructured.NestedStringSlice(webhook, "conversionReviewVersions"); ok && len(vs) > 0 {
		u.versions = nil
		for _, v := range vs {
			u.versions = append(u.versions, v)
		}
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if storage, _ := m["storage"].(bool); storage {
			u.stored = name
			continue
		}
		// A version that is not served is never asked for; only objects
		// stored at it before an upgrade could need converting.
		if served, _ := m["served"].(bool); served {
			u.others = append(u.others, name)
		}
	}
	return u
}

// conversionServer picks the Deployment whose webhook server converts a
// CRD: the one whose generated or shipped Service the stanza names, else
// the only Deployment serving webhooks.
func (g *generator) conversionServer(u undeclaredConversion) (string, bool) {
	deps := slices.Sorted(maps.Keys(g.served))
	_, name, _ := strings.Cut(u.service, "/")
	for _, dep := range deps {
		if g.served[dep].service == name {
			return dep, true
		}
	}
	for _, o := range g.out {
		if o.GetKind() != "Service" || o.GroupVersionKind().Group != "" || o.GetName() != name {
			continue
		}
		sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
		for _, dep := range deps {
			if len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(g.podLabels(dep))) {
				return dep, true
			}
		}
	}
	if len(deps) == 1 {
		return deps[0], true
	}
	return "", false
}

func (g *generator) podLabels(deployment string) map[string]string {
	for _, d := range g.csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d.Name == deployment {
			return d.Spec.Template.Labels
		}
	}
	return nil
}

// describeUnserved says in one problem, grouped by the Service the CRDs
// name, which versions of which CRDs would fail.
func describeUnserved(us []undeclaredConversion) string {
	byService := map[string][]string{}
	for _, u := range us {
		byService[u.service] = append(byService[u.service], fmt.Sprintf("%s (stored as %s; %s would fail)", u.crd.GetName(), u.stored, strings.Join(u.others, ", ")))
	}
	var groups []string
	for _, svc := range slices.Sorted(maps.Keys(byService)) {
		crds := byService[svc]
		sort.Strings(crds)
		groups = append(groups, fmt.Sprintf("service %s for %s", svc, strings.Join(crds, ", ")))
	}
	what := "a CustomResourceDefinition serves"
	if len(us) > 1 {
		what = fmt.Sprintf("%d CustomResourceDefinitions serve", len(us))
	}
	return fmt.Sprintf("%s several versions through a conversion webhook that the ClusterServiceVersion does not declare and no Deployment of the bundle serves, so the API server would serve only the stored version and fail every read or write at another: %s", what, strings.Join(groups, "; "))
}
