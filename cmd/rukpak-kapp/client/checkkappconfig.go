package client

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/kappconfig"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
)

// kappConfigFacts is what the check of kapp-controller-config looks at.
type kappConfigFacts struct {
	// kappNamespace is where a kapp-controller Deployment runs; "" when
	// none was found.
	kappNamespace string
	// adapterNamespace is where the adapter reads kapp-controller-config
	// (its --kapp-controller-namespace; "" when it reads none); flagKnown
	// says it was read from the adapter's Deployment, not assumed (the
	// default) for an adapter run elsewhere.
	adapterNamespace string
	flagKnown        bool
	// config is what kapp-controller reads (Kind "" when neither exists).
	config kappconfig.Config
	// readable says the adapter's account may read it.
	readable bool
	// adapterEnv and kappEnv are the proxy variables of each Deployment's
	// container.
	adapterEnv, kappEnv map[string]string
}

const kappConfigCheck = "kapp-controller-config"

// evalKappConfig says whether the adapter's fetches and kapp-controller's
// reach servers the same way: the same kapp-controller-config, which the
// adapter can read and parse, or, with none, the same proxies in their
// environments.
func evalKappConfig(f kappConfigFacts) CheckResult {
	ns := f.kappNamespace
	if ns == "" {
		ns = f.adapterNamespace
	}
	flagFix := func(to string) string {
		return "set --kapp-controller-namespace=" + to + " on the adapter's Deployment (kubectl -n NAMESPACE edit deployment " + adapterName + ")"
	}
	switch {
	case f.adapterNamespace == "" && f.config.Kind != "":
		return fail(kappConfigCheck, fmt.Sprintf("kapp-controller reads %s, the adapter none (--kapp-controller-namespace is empty): a source kapp-controller reaches through its CAs and proxies fails when the adapter fetches it (Bundles on their own, registry+v1 and helm bundles)",
			f.config.Source()), flagFix(ns))
	case f.kappNamespace != "" && f.adapterNamespace != "" && f.kappNamespace != f.adapterNamespace && !f.flagKnown:
		return warn(kappConfigCheck, fmt.Sprintf("kapp-controller runs in %s; an adapter run without this release's Deployment reads %s in %s unless told otherwise",
			f.kappNamespace, fetch.KappControllerConfigName, f.adapterNamespace), "run it with --kapp-controller-namespace="+f.kappNamespace)
	case f.kappNamespace != "" && f.adapterNamespace != "" && f.kappNamespace != f.adapterNamespace:
		return fail(kappConfigCheck, fmt.Sprintf("kapp-controller runs in %s, the adapter reads %s in %s: they would reach servers with different CAs and proxies",
			f.kappNamespace, fetch.KappControllerConfigName, f.adapterNamespace), flagFix(f.kappNamespace))
	case f.config.Kind == "":
		if diff := proxyDiff(f.adapterEnv, f.kappEnv); diff != "" {
			return warn(kappConfigCheck, "no "+fetch.KappControllerConfigName+" in "+ns+", so each uses its own environment, and they differ: "+diff,
				"name the proxies once, in a Secret "+fetch.KappControllerConfigName+" in "+ns+" (httpProxy, httpsProxy, noProxy), which both follow")
		}
		return ok(kappConfigCheck, "none in "+ns+": kapp-controller and the adapter both reach servers as their environment says")
	case !f.readable:
		return fail(kappConfigCheck, fmt.Sprintf("the adapter may not read %s, so its fetches ignore the CAs and proxies kapp-controller uses", f.config.Source()),
			"apply this release's config/rbac (its ClusterRole rukpak-kapp grants get, list and watch of that name)")
	}
	if err := fetch.ParseNetwork(f.config.Source(), f.config.Data, "").Err(); err != nil {
		return fail(kappConfigCheck, err.Error()+": every fetch the adapter makes fails until it is fixed",
			"fix it: caCerts holds PEM certificates, httpProxy and httpsProxy are http(s)://host:port URLs")
	}
	var says []string
	for _, k := range []string{"caCerts", "httpProxy", "httpsProxy", "noProxy", "dangerousSkipTLSVerify"} {
		if strings.TrimSpace(f.config.Data[k]) != "" {
			says = append(says, k)
		}
	}
	what := "nothing about the network"
	if len(says) > 0 {
		what = strings.Join(says, ", ")
	}
	msg := fmt.Sprintf("the adapter's fetches follow %s as kapp-controller's do (%s)", f.config.Source(), what)
	if f.config.ConfigMapIgnored {
		msg += "; the ConfigMap of that name is ignored, by both, while the Secret exists"
	}
	return ok(kappConfigCheck, msg)
}

// proxyVars are what Go's and git's proxy settings read.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}

// proxyEnv is the proxy variables of d's first container (upper case wins,
// as Go reads them).
func proxyEnv(d *appsv1.Deployment) map[string]string {
	out := map[string]string{}
	if d == nil || len(d.Spec.Template.Spec.Containers) == 0 {
		return out
	}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		upper := strings.ToUpper(e.Name)
		if slices.Contains(proxyVars, upper) && (out[upper] == "" || e.Name == upper) {
			out[upper] = e.Value
		}
	}
	return out
}

// proxyDiff names the proxy variables set differently, without their
// values (a proxy URL may carry a password).
func proxyDiff(adapterEnv, kappEnv map[string]string) string {
	var diff []string
	for _, v := range proxyVars {
		if adapterEnv[v] != kappEnv[v] {
			diff = append(diff, v)
		}
	}
	if len(diff) == 0 {
		return ""
	}
	return strings.Join(diff, ", ") + " of the adapter's Deployment and kapp-controller's"
}

// kappControllerNamespaceOf is the adapter Deployment's
// --kapp-controller-namespace, its default when not given.
func kappControllerNamespaceOf(d *appsv1.Deployment) string {
	if ns, set := flagOf(d, "--kapp-controller-namespace"); set {
		return ns
	}
	return "kapp-controller"
}

// flagOf is the value the containers of d give flag ("--flag=value" or
// "--flag value", the last one said); set is false when none does or d is
// nil.
func flagOf(d *appsv1.Deployment, flag string) (value string, set bool) {
	if d == nil {
		return "", false
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		args := append(slices.Clone(c.Command), c.Args...)
		for i, a := range args {
			switch {
			case strings.HasPrefix(a, flag+"="):
				value, set = strings.TrimPrefix(a, flag+"="), true
			case a == flag && i+1 < len(args):
				value, set = args[i+1], true
			}
		}
	}
	return value, set
}
