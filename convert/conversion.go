package convert

import (
	"crypto/x509"
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
	service  string // namespace/name it names (or its URL)
	stored   string
	others   []string // the other served versions, which need the webhook
	path     string
	port     int64
	versions []any // conversionReviewVersions
	// badCA says the stanza's caBundle holds no certificate, which keeps
	// the API server from ever establishing the CRD.
	badCA bool
}

// undeclaredConversions settles each CRD whose conversion webhook the CSV
// does not declare, by what kube-apiserver does with a webhook that does
// not exist (test/api/crdconversion_test.go):
//   - a caBundle that holds no certificate (published bundles ship such
//     placeholders) keeps the CRD from being established at all;
//   - otherwise, with one version it never calls the webhook, so the CRD
//     works; with several it serves only the stored version, and every
//     read or write at another fails.
//
// So with one served version the stanza is dropped: the CRD then works
// whatever its caBundle, and the object says what really happens. With
// several, when the operator serves webhooks, the conversion is pointed at
// its generated webhook Service (its webhook server is where it would be
// served). Otherwise the stanza is kept as shipped, with a note of what
// does not convert until something serves it there: operators that deploy
// their operand often have the operand serve it and fill in the stanza
// (external-secrets-operator does), as OLM installs them. Only a caBundle
// that holds no certificate cannot work, whoever serves the webhook: that
// bundle is refused, naming each such CRD, in one problem.
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
			why := ""
			if u.badCA {
				why = " (and its caBundle, which holds no certificate, would keep the CRD from being served at all)"
			}
			g.notes = append(g.notes, fmt.Sprintf("CustomResourceDefinition %s: its conversion webhook (service %s), which the ClusterServiceVersion does not declare, is dropped: with the single served version %s the API server never calls it%s", crd.GetName(), u.service, u.stored, why))
			continue
		}
		dep, ok := g.conversionServer(u)
		if !ok {
			if u.badCA {
				unserved = append(unserved, u)
				continue
			}
			g.notes = append(g.notes, fmt.Sprintf("CustomResourceDefinition %s: its conversion webhook (service %s), which the ClusterServiceVersion does not declare and no Deployment of the bundle serves, is kept as shipped: "+
				"until something serves it there (often the operand, once the operator runs), reads and writes at %s fail; %s, the stored version, works", crd.GetName(), u.service, strings.Join(u.others, ", "), u.stored))
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
		pointConversion(crd, u.versions, served.caBundle, g.installNS, served.service, u.path, port)
		g.notes = append(g.notes, fmt.Sprintf("CustomResourceDefinition %s: its conversion webhook (service %s), which the ClusterServiceVersion does not declare, is pointed at the webhook Service %s/%s of Deployment %s (path %s), where the operator serves its webhooks", crd.GetName(), u.service, g.installNS, served.service, dep, u.path))
	}
	if len(unserved) > 0 {
		p.addf("%s", describeUnserved(unserved))
	}
}

// pointConversion sets a CRD's conversion to a webhook Service.
func pointConversion(crd *unstructured.Unstructured, reviewVersions []any, caBundle []byte, namespace, service, path string, port int32) {
	_ = unstructured.SetNestedMap(crd.Object, map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"conversionReviewVersions": reviewVersions,
			"clientConfig": map[string]any{
				"caBundle": base64.StdEncoding.EncodeToString(caBundle),
				"service": map[string]any{
					"namespace": namespace, "name": service,
					"path": path, "port": int64(port),
				},
			},
		},
	}, "spec", "conversion")
}

func readUndeclared(crd *unstructured.Unstructured) undeclaredConversion {
	u := undeclaredConversion{crd: crd, path: "/", port: 443, versions: []any{"v1"}}
	webhook, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook")
	ns, _, _ := unstructured.NestedString(webhook, "clientConfig", "service", "namespace")
	name, _, _ := unstructured.NestedString(webhook, "clientConfig", "service", "name")
	u.service = ns + "/" + name
	if url, ok, _ := unstructured.NestedString(webhook, "clientConfig", "url"); ok && url != "" {
		u.service = url
	}
	if path, ok, _ := unstructured.NestedString(webhook, "clientConfig", "service", "path"); ok && path != "" {
		u.path = path
	}
	if port, ok, _ := unstructured.NestedInt64(webhook, "clientConfig", "service", "port"); ok {
		u.port = port
	}
	if ca, ok, _ := unstructured.NestedString(webhook, "clientConfig", "caBundle"); ok && ca != "" {
		data, err := base64.StdEncoding.DecodeString(ca)
		u.badCA = err != nil || !holdsCertificates(data)
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
// name, that the API server would never serve them.
func describeUnserved(us []undeclaredConversion) string {
	byService := map[string][]string{}
	for _, u := range us {
		byService[u.service] = append(byService[u.service], u.crd.GetName())
	}
	var groups []string
	for _, svc := range slices.Sorted(maps.Keys(byService)) {
		crds := byService[svc]
		sort.Strings(crds)
		groups = append(groups, fmt.Sprintf("service %s for %s", svc, strings.Join(crds, ", ")))
	}
	what, them := "a CustomResourceDefinition names", "it"
	if len(us) > 1 {
		what, them = fmt.Sprintf("%d CustomResourceDefinitions name", len(us)), "them"
	}
	return fmt.Sprintf("%s a conversion webhook that the ClusterServiceVersion does not declare and no Deployment of the bundle serves, "+
		"with a caBundle that holds no certificate, so the API server would never serve %s: %s", what, them, strings.Join(groups, "; "))
}

// holdsCertificates says whether data holds a PEM certificate, which is
// what the API server asks of a caBundle (it loads it into a pool).
func holdsCertificates(data []byte) bool {
	return x509.NewCertPool().AppendCertsFromPEM(data)
}
