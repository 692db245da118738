package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(p*float64(len(d))+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func (r *result) summaryLine() string {
	return fmt.Sprintf("%s; one change in %s; one apply at rest in %s", r.installed(), secs(r.Change), singles(r.Single))
}

// singles lists the times of the applies at rest, in the order made.
func singles(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(d))
	for _, x := range d {
		parts = append(parts, secs(x))
	}
	return strings.Join(parts, ", ")
}

func (r *result) installLine() string {
	return fmt.Sprintf("%s; install CPU s %.1f (%s), control plane %.1f, earlier systems meanwhile %.1f",
		r.installed(), total(r.InstallCPU), perProcess(r.InstallCPU, ""), r.ControlPlaneCPU, r.Background)
}

func (r *result) driftLine() string {
	d := r.Drift
	all := d.all()
	return fmt.Sprintf("%s drift: %d repairs, p50 %s, p95 %s, max %s, %d not repaired within %s",
		r.System, len(all), secs(percentile(all, .5)), secs(percentile(all, .95)), secs(percentile(all, 1)), d.Missing, driftBound)
}

// controllerClient is the API client whose request rate limits a system's
// installs: kapp-controller's; none for rukpak.
func controllerClient(system string) string {
	switch system {
	case "rukpak-kapp":
		return "kapp-controller"
	case "floor":
		return "kapp-controller (floor)"
	}
	return ""
}

// sortedDurations is a sorted copy: the report never reorders a result.
func sortedDurations(d []time.Duration) []time.Duration {
	out := slices.Clone(d)
	slices.Sort(out)
	return out
}

func spread(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	d = sortedDurations(d)
	return fmt.Sprintf("%s / %s / %s", secs(percentile(d, .5)), secs(percentile(d, .95)), secs(percentile(d, 1)))
}

func (r *result) installed() string {
	return fmt.Sprintf("%s N=%d: all installed in %s (p50 %s, p95 %s, max %s, %d missing)",
		r.System, r.N, secs(r.Total), secs(percentile(r.Installed, .5)), secs(percentile(r.Installed, .95)),
		secs(percentile(r.Installed, 1)), r.Missing)
}

func total(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}

func perProcess(m map[string]float64, unit string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.1f%s", k, m[k], unit))
	}
	return strings.Join(parts, ", ")
}

// systemClients are the API clients that belong to a system.
var systemClients = map[string][]string{
	"rukpak-kapp": {"adapter", "kapp-controller", "kapp"},
	"floor":       {"kapp-controller (floor)", "kapp (floor)"},
	"rukpak":      {"rukpak"},
}

func apiOf(r *result, counts map[string]apiCount) string {
	var parts []string
	for _, c := range systemClients[r.System] {
		parts = append(parts, fmt.Sprintf("%s %d/%d", c, counts[c].Requests, counts[c].Writes))
	}
	return strings.Join(parts, ", ")
}

func tables(results []*result) string {
	var b strings.Builder
	if len(results) > 0 {
		fmt.Fprintf(&b, "\n%s\n", results[0].Setup)
	}
	fmt.Fprintf(&b, "\n| system | N | all Installed | p50 | p95 | max | one change | one apply at rest (%d, one at a time) | CPU s (install) | control plane CPU s meanwhile | CPU s of earlier systems meanwhile | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n", singleApplies)
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %.1f (%s) | %.1f | %.1f | %s |\n", r.System, r.N, secs(r.Total),
			secs(percentile(r.Installed, .5)), secs(percentile(r.Installed, .95)), secs(percentile(r.Installed, 1)),
			secs(r.Change), singles(r.Single), total(r.InstallCPU), perProcess(r.InstallCPU, ""), r.ControlPlaneCPU, r.Background, perProcess(r.PeakRSS, ""))
	}
	fmt.Fprintf(&b, "\n| system | kapp-controller requests per App (install) | kapp-controller requests/s: mean / median second / busiest second |\n|---|---|---|\n")
	for _, r := range results {
		kc := controllerClient(r.System)
		if kc == "" {
			continue
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f / %.0f / %.0f |\n", r.System, float64(r.InstallAPI[kc].Requests)/float64(r.N),
			r.Controller.Mean, r.Controller.P50, r.Controller.Max)
	}
	fmt.Fprintf(&b, "\n| system | drift repairs | deleted ConfigMap restored: p50 / p95 / max | edited replicas restored: p50 / p95 / max | all: p50 / p95 | not repaired within %s |\n|---|---|---|---|---|---|\n", driftBound)
	for _, r := range results {
		if d := r.Drift; d != nil {
			all := d.all()
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s / %s | %d |\n", r.System, d.count(), spread(d.Deleted), spread(d.Edited),
				secs(percentile(all, .5)), secs(percentile(all, .95)), d.Missing)
		}
	}
	fmt.Fprintf(&b, "\n| system | stored per object installed (JSON as served) |\n|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s |\n", r.System, r.Stored.perObject(r.N))
	}
	fmt.Fprintf(&b, "\n| system | API requests/writes during install | adapter writes per BD, Events apart | idle window | CPU s idle | API requests/writes idle |\n|---|---|---|---|---|---|\n")
	for _, r := range results {
		perBD := "-"
		if r.System == "rukpak-kapp" {
			a := r.InstallAPI["adapter"]
			perBD = fmt.Sprintf("%.2f (+%.2f Events)", float64(a.Writes-a.EventWrites)/float64(r.N), float64(a.EventWrites)/float64(r.N))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f (%s) | %s |\n", r.System, apiOf(r, r.InstallAPI), perBD,
			r.Idle.Round(time.Second), total(r.IdleCPU), perProcess(r.IdleCPU, ""), apiOf(r, r.IdleAPI))
	}
	return b.String()
}
