package convert

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

// ServingCert is what a webhook Service serves with and what callers trust.
type ServingCert struct {
	// Serving is the Service's certificate and key.
	Serving certs.Pair
	// CABundle is the PEM the API server verifies Serving with.
	CABundle []byte
}

// CertSource hands out the serving certificate of a webhook Service. The
// adapter keeps them in the cluster so they stay the same across
// reconciles; the offline CLI makes fresh ones.
type CertSource func(service, namespace string) (ServingCert, error)

// Where operators built with controller-runtime or the apiserver library
// look for their serving certificates; OLM mounts them at both.
const (
	webhookCertDir    = "/tmp/k8s-webhook-server/serving-certs"
	apiserviceCertDir = "/apiserver.local.config/certificates"
	// kapp applies webhook configurations only once the operator that
	// serves them is up, so a failurePolicy Fail webhook cannot block its
	// own install.
	changeGroup = "kapp.k14s.io/change-group"
	changeRule  = "kapp.k14s.io/change-rule"
	operatorsUp = "rukpak-kapp.io/operator-deployments"
)

// webhooks adds, per webhook definition, its Service, serving Secret,
// configuration or CRD conversion settings, and mounts the certificate
// into the Deployment.
func (g *generator) webhooks(p *problems, crds []*unstructured.Unstructured, source CertSource) {
	defs := g.csv.Spec.WebhookDefinitions
	if len(defs) == 0 {
		return
	}
	deployments := map[string]bool{}
	for _, d := range g.csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		deployments[d.Name] = true
	}
	names := map[string]bool{}
	byDeployment := map[string][]v1alpha1.WebhookDescription{}
	for _, w := range defs {
		if w.ContainerPort == 0 {
			w.ContainerPort = 443
		}
		if !deployments[w.DeploymentName] {
			p.addf("webhook %s names deployment %q, which the ClusterServiceVersion does not define", w.GenerateName, w.DeploymentName)
			continue
		}
		if errs := validation.IsDNS1123Subdomain(w.GenerateName); len(errs) > 0 {
			p.addf("webhook name %q is invalid: %s", w.GenerateName, strings.Join(errs, "; "))
			continue
		}
		key := string(w.Type) + "/" + w.GenerateName
		if names[key] {
			p.addf("two %s definitions are named %s", w.Type, w.GenerateName)
			continue
		}
		names[key] = true
		byDeployment[w.DeploymentName] = append(byDeployment[w.DeploymentName], w)
	}
	for _, dep := range slices.Sorted(maps.Keys(deployments)) {
		ws := byDeployment[dep]
		if len(ws) == 0 {
			continue
		}
		service := ws[0].DomainName() + "-service"
		if errs := validation.IsDNS1035Label(service); len(errs) > 0 {
			p.addf("webhook Service name %q (from deployment %s) is invalid: %s", service, dep, strings.Join(errs, "; "))
			continue
		}
		cert, err := source(service, g.installNS)
		if err != nil {
			p.addf("serving certificate for %s/%s: %v", g.installNS, service, err)
			continue
		}
		g.webhookService(p, service, dep, ws)
		secret := service + "-cert"
		g.typed(p, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: g.installNS},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{"tls.crt": cert.Serving.CertPEM, "tls.key": cert.Serving.KeyPEM, "ca.crt": cert.CABundle},
		}, "v1", "Secret")
		g.certMounts[dep] = secret
		g.served[dep] = servedWebhook{service: service, ports: servicePorts(ws), caBundle: cert.CABundle}
		for _, w := range ws {
			g.webhookConfig(p, w, crds, cert.CABundle)
		}
	}
}

// servedWebhook is the generated webhook Service of a Deployment.
type servedWebhook struct {
	service  string
	ports    []corev1.ServicePort
	caBundle []byte
}

func (g *generator) webhookService(p *problems, name, deployment string, ws []v1alpha1.WebhookDescription) {
	var selector map[string]string
	for _, d := range g.csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d.Name == deployment && d.Spec.Selector != nil {
			selector = d.Spec.Selector.MatchLabels
		}
	}
	ports := servicePorts(ws)
	svc, err := toUnstructured(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.installNS},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: ports},
	}, "v1", "Service")
	if err != nil {
		p.addf("%v", err)
		return
	}
	for i, o := range g.out {
		if o.GetKind() == "Service" && o.GroupVersionKind().Group == "" && o.GetNamespace() == g.installNS && o.GetName() == name {
			g.out[i] = g.overShipped(o, svc, deployment)
			return
		}
	}
	g.add(svc)
}

// servicePorts are the ports of a Deployment's webhook Service: one per
// distinct container and target port.
func servicePorts(ws []v1alpha1.WebhookDescription) []corev1.ServicePort {
	seen := map[string]bool{}
	var ports []corev1.ServicePort
	for _, w := range ws {
		target := intstr.FromInt32(w.ContainerPort)
		if w.TargetPort != nil {
			target = *w.TargetPort
		}
		key := fmt.Sprintf("%d/%s", w.ContainerPort, target.String())
		if seen[key] {
			continue
		}
		seen[key] = true
		ports = append(ports, corev1.ServicePort{Name: fmt.Sprint(w.ContainerPort), Port: w.ContainerPort, TargetPort: target})
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i].Port < ports[j].Port })
	if len(ports) > 1 {
		for i := range ports {
			ports[i].Name = fmt.Sprintf("%d-%s", ports[i].Port, ports[i].TargetPort.String())
		}
	}
	return ports
}

// overShipped resolves a bundle's Service named like the webhook Service
// of a Deployment. OLM server-side applies its own Service over the
// bundle's with force, so its selector (an atomic map) and its ports (keyed
// by port and protocol) replace the bundle's, and everything else of the
// bundle's Service stays; the converter does the same, and notes it.
func (g *generator) overShipped(shipped, generated *unstructured.Unstructured, deployment string) *unstructured.Unstructured {
	out := shipped.DeepCopy()
	selector, _, _ := unstructured.NestedFieldCopy(generated.Object, "spec", "selector")
	_ = unstructured.SetNestedField(out.Object, selector, "spec", "selector")
	ports, _, _ := unstructured.NestedSlice(generated.Object, "spec", "ports")
	taken := map[string]bool{}
	for _, port := range ports {
		taken[portKey(port)] = true
	}
	old, _, _ := unstructured.NestedSlice(shipped.Object, "spec", "ports")
	for _, port := range old {
		if !taken[portKey(port)] {
			ports = append(ports, port)
		}
	}
	_ = unstructured.SetNestedSlice(out.Object, ports, "spec", "ports")
	where := fmt.Sprintf("Service %s/%s: the bundle ships a Service with the name of the webhook Service generated for Deployment %s", g.installNS, shipped.GetName(), deployment)
	if equality.Semantic.DeepEqual(out.Object, shipped.Object) {
		g.notes = append(g.notes, where+"; it agrees with the generated one and the bundle's Service is kept as shipped")
		return shipped
	}
	g.notes = append(g.notes, where+"; as OLM does, the bundle's Service is kept with the webhook's selector and ports put over its own")
	return out
}

// portKey identifies a Service port as server-side apply merges them.
func portKey(port any) string {
	m, _ := port.(map[string]any)
	protocol, _ := m["protocol"].(string)
	if protocol == "" {
		protocol = string(corev1.ProtocolTCP)
	}
	return fmt.Sprintf("%v/%s", m["port"], protocol)
}

func (g *generator) webhookConfig(p *problems, w v1alpha1.WebhookDescription, crds []*unstructured.Unstructured, caBundle []byte) {
	var nsSelector *metav1.LabelSelector
	if !allNamespaces(g.targets) {
		nsSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: g.targets,
		}}}
	}
	meta := metav1.ObjectMeta{Name: w.GenerateName, Annotations: map[string]string{changeRule: "upsert after upserting " + operatorsUp}}
	switch w.Type {
	case v1alpha1.ValidatingAdmissionWebhook:
		g.typed(p, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: meta,
			Webhooks:   []admissionregistrationv1.ValidatingWebhook{w.GetValidatingWebhook(g.installNS, nsSelector, caBundle)},
		}, "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
	case v1alpha1.MutatingAdmissionWebhook:
		g.typed(p, &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: meta,
			Webhooks:   []admissionregistrationv1.MutatingWebhook{w.GetMutatingWebhook(g.installNS, nsSelector, caBundle)},
		}, "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration")
	case v1alpha1.ConversionWebhook:
		if !allNamespaces(g.targets) {
			// Conversion is cluster-wide: one operator must serve every namespace.
			p.addf("conversion webhook %s needs the operator to watch all namespaces", w.GenerateName)
			return
		}
		g.conversion(p, w, crds, caBundle)
	default:
		p.addf("webhook %s has unknown type %q", w.GenerateName, w.Type)
	}
}

// conversion points each named CRD at the webhook Service.
func (g *generator) conversion(p *problems, w v1alpha1.WebhookDescription, crds []*unstructured.Unstructured, caBundle []byte) {
	path := "/"
	if w.WebhookPath != nil {
		path = *w.WebhookPath
	}
	for _, name := range w.ConversionCRDs {
		var crd *unstructured.Unstructured
		for _, c := range crds {
			if c.GetName() == name {
				crd = c
			}
		}
		if crd == nil {
			p.addf("conversion webhook %s names CustomResourceDefinition %s, which the bundle does not hold", w.GenerateName, name)
			continue
		}
		if keep, _, _ := unstructured.NestedBool(crd.Object, "spec", "preserveUnknownFields"); keep {
			p.addf("CustomResourceDefinition %s sets preserveUnknownFields, which a conversion webhook does not allow", name)
			continue
		}
		versions := make([]any, 0, len(w.AdmissionReviewVersions))
		for _, v := range w.AdmissionReviewVersions {
			versions = append(versions, v)
		}
		pointConversion(crd, versions, caBundle, g.installNS, w.DomainName()+"-service", path, w.ContainerPort)
	}
}

// mountCerts replaces whatever a Deployment mounts at the certificate paths
// with the serving Secret, as OLM does.
func mountCerts(spec *appsv1.DeploymentSpec, secret string) {
	pod := &spec.Template.Spec
	var volumes []corev1.Volume
	for _, v := range pod.Volumes {
		if v.Name != "webhook-cert" && v.Name != "apiservice-cert" {
			volumes = append(volumes, v)
		}
	}
	pod.Volumes = append(volumes,
		corev1.Volume{Name: "webhook-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secret, Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "tls.crt"}, {Key: "tls.key", Path: "tls.key"}},
		}}},
		corev1.Volume{Name: "apiservice-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secret, Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "apiserver.crt"}, {Key: "tls.key", Path: "apiserver.key"}},
		}}},
	)
	for i := range pod.Containers {
		c := &pod.Containers[i]
		var mounts []corev1.VolumeMount
		for _, m := range c.VolumeMounts {
			if m.Name != "webhook-cert" && m.Name != "apiservice-cert" && m.MountPath != webhookCertDir && m.MountPath != apiserviceCertDir {
				mounts = append(mounts, m)
			}
		}
		c.VolumeMounts = append(mounts,
			corev1.VolumeMount{Name: "webhook-cert", MountPath: webhookCertDir},
			corev1.VolumeMount{Name: "apiservice-cert", MountPath: apiserviceCertDir},
		)
	}
}
