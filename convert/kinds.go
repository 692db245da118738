package convert

import "k8s.io/apimachinery/pkg/runtime/schema"

// scope of the extra kinds a registry+v1 bundle may ship as well as its CSV and
// CRDs: operator-registry's list (as of v1.73.0), with VerticalPodAutoscaler
// correctly namespaced. true means namespaced. Keyed by group too: a bundle's
// own custom resource named like a core kind (a "Secret" of some operator's
// API) is not that kind.
var supportedKinds = map[schema.GroupKind]bool{
	{Kind: "Service"}:        true,
	{Kind: "ServiceAccount"}: true,
	{Kind: "ConfigMap"}:      true,
	{Kind: "Secret"}:         true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        false,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: false,
	{Group: "monitoring.coreos.com", Kind: "PrometheusRule"}:         true,
	{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}:         true,
	{Group: "monitoring.coreos.com", Kind: "PodMonitor"}:             true,
	{Group: "policy", Kind: "PodDisruptionBudget"}:                   true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:              true,
	{Group: "autoscaling.k8s.io", Kind: "VerticalPodAutoscaler"}:     true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:              false,
	{Group: "console.openshift.io", Kind: "ConsoleYAMLSample"}:       false,
	{Group: "console.openshift.io", Kind: "ConsoleQuickStart"}:       false,
	{Group: "console.openshift.io", Kind: "ConsoleCLIDownload"}:      false,
	{Group: "console.openshift.io", Kind: "ConsoleLink"}:             false,
	{Group: "console.openshift.io", Kind: "ConsolePlugin"}:           false,
}

// typedByKind are the kinds OLM v0 creates by reading a bundle's object
// into the one API type of that kind, whatever its apiVersion says (every
// other kind it creates through discovery, which needs the apiVersion).
var typedByKind = map[string]string{
	"Service":            "v1",
	"ServiceAccount":     "v1",
	"ConfigMap":          "v1",
	"Secret":             "v1",
	"Role":               "rbac.authorization.k8s.io/v1",
	"RoleBinding":        "rbac.authorization.k8s.io/v1",
	"ClusterRole":        "rbac.authorization.k8s.io/v1",
	"ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
}

// applyOrder puts objects in the order they can be created in: definitions
// and identities before what uses them, workloads last.
var applyOrder = map[string]int{
	"CustomResourceDefinition":       0,
	"PriorityClass":                  1,
	"ServiceAccount":                 2,
	"ClusterRole":                    3,
	"ClusterRoleBinding":             4,
	"Role":                           5,
	"RoleBinding":                    6,
	"Secret":                         7,
	"ConfigMap":                      8,
	"Service":                        9,
	"Deployment":                     20,
	"ValidatingWebhookConfiguration": 21,
	"MutatingWebhookConfiguration":   22,
}

func orderOf(kind string) int {
	if o, ok := applyOrder[kind]; ok {
		return o
	}
	return 10
}
