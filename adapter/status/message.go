package status

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// maxMessage keeps condition messages readable; kapp and vendir can print
// megabytes, and the useful part is at the start and at the end.
const maxMessage = 2048

var (
	// Temporary directories and kapp's clock prefixes differ between runs of
	// the same failure; dropping them keeps the status bytes stable.
	tempDir   = regexp.MustCompile(`(/[^\s:'"]*)?/(kapp-controller|vendir|ytt|helm)[A-Za-z0-9._-]*?\d+(/[^\s:'"]*)?`)
	clockTime = regexp.MustCompile(`(?m)^\d{1,2}:\d{2}:\d{2}(AM|PM): `)
	blankRuns = regexp.MustCompile(`\n{2,}`)
	wrapped   = regexp.MustCompile(`[ \t]*\n\s*`)
)

// Message returns the first non-empty candidate, cleaned for a condition:
// never empty, never "<nil>", stable for the same cause, and bounded.
func Message(candidates ...string) string {
	msg := ""
	for _, c := range candidates {
		if c = strings.TrimSpace(c); c != "" && c != "<nil>" {
			msg = c
			break
		}
	}
	if msg == "" {
		return "kapp-controller reported a failure without details; see the App's status in the system namespace"
	}
	// The API server stores text as valid UTF-8; anything else would differ
	// from what was computed on every reconcile.
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = Redact(msg)
	msg = tempDir.ReplaceAllString(msg, "<tmp>")
	msg = clockTime.ReplaceAllString(msg, "")
	msg = blankRuns.ReplaceAllString(msg, "\n")
	msg = strings.TrimSpace(msg)
	return Shorten(msg, maxMessage)
}

// Shorten bounds text to limit bytes, keeping its start and, mostly, its
// end, where tools print the cause. It cuts on character boundaries: half a
// character would be stored as U+FFFD and never equal the computed text
// again.
func Shorten(msg string, limit int) string {
	const cut = "\n...\n"
	if len(msg) <= limit {
		return msg
	}
	if limit <= len(cut) {
		return strings.ToValidUTF8(msg[:max(limit, 0)], "")
	}
	head, tail := limit/4, len(msg)-(limit*3/4-len(cut))
	for head > 0 && !utf8.RuneStart(msg[head]) {
		head--
	}
	for tail < len(msg) && !utf8.RuneStart(msg[tail]) {
		tail++
	}
	msg = msg[:head] + cut + msg[tail:]
	return msg
}

const zeroObjects = "found zero objects: plain+v0 bundles are required to contain at least one object"

// explainTemplate says why the template step failed: the bundle, in
// rukpak's words, unless kapp-controller lost its own process.
func explainTemplate(detail string) string {
	if LostChild(detail) {
		return lostChildText + detail
	}
	return "invalid bundle: " + templateCause(detail)
}

// templateCause names the usual causes of an invalid bundle's template failure.
func templateCause(detail string) string {
	if strings.Contains(detail, "to match at least one file") {
		return zeroObjects
	}
	if msg, ok := outOfMemory(detail); ok {
		return msg
	}
	// The only path ytt is given is manifests/ (the temp path around it is
	// already stripped from detail).
	if (strings.Contains(detail, "Checking file") || strings.Contains(detail, "Checking path")) &&
		strings.Contains(detail, "no such file or directory") {
		return "readdir manifests: file does not exist: the bundle has no manifests/ directory (" + detail + ")"
	}
	return detail
}

// explainFetch says why the fetch step failed: in rukpak's words where
// rukpak had them (a ConfigMap source that does not exist, read from the
// namespace ns), then vendir's.
func explainFetch(detail, ns string) string {
	if LostChild(detail) {
		return lostChildText + detail
	}
	if m := missingConfigMap.FindStringSubmatch(detail); m != nil {
		return fmt.Sprintf("get configmap %s/%s: ConfigMap %q not found; kapp-controller: %s", ns, m[1], m[1], detail)
	}
	return detail
}

// missingConfigMap is vendir's error for an inline source's ConfigMap that
// is not there (the API server's NotFound, as client-go prints it).
var missingConfigMap = regexp.MustCompile(`configmaps "([^"]+)" not found`)

// LostChild says whether a step's error (an App's or, mirrored, a
// PackageInstall's) is kapp-controller v0.53.1's sidecar losing the exit
// status of its own vendir or ytt process to the zombie reaper that runs
// alongside it (replaced upstream by tini in carvel-dev/kapp-controller pull
// request 1806, merged in April 2026). The step failed for a reason of
// kapp-controller's, not of the bundle, and kapp-controller's next attempt
// usually succeeds.
func LostChild(detail string) bool {
	return strings.Contains(detail, "waitid: no child processes")
}

const lostChildText = "kapp-controller lost track of its own vendir or ytt process (a race in kapp-controller's sidecar, " +
	"not a problem of the bundle); kapp-controller retries the step after a short backoff: "

// emptyContent is vendir's way of saying that a source holds no files.
func emptyContent(detail string) bool {
	return strings.Contains(detail, "Expected to find at least one file within directory")
}

// CRDSafetyWebhook is the CRD upgrade safety check's webhook name
// (config/webhook), which the API server's refusal quotes.
const CRDSafetyWebhook = "crd-upgrade-safety.core.rukpak.io"

// crdRefusal is the check's own text from kapp's report of the refused
// CRD update ("... API server says: admission webhook "…" denied the
// request: <text> (reason: Forbidden)"): the text names the CRD, the
// versions, fields, rules and objects, and how to opt out; kapp's wrapping
// around it only costs room.
func crdRefusal(detail string) (string, bool) {
	_, text, ok := strings.Cut(detail, `admission webhook "`+CRDSafetyWebhook+`" denied the request: `)
	if !ok {
		return "", false
	}
	if i := strings.LastIndex(text, " (reason: "); i >= 0 {
		text = text[:i]
	}
	// kapp wraps long error lines, indenting what follows a break; the
	// check's text has no line breaks of its own.
	text = wrapped.ReplaceAllString(text, " ")
	return "The CRD upgrade safety check refused kapp's update of a CRD, so kapp applied nothing of this bundle but, at most, its other CRDs, " +
		"and the existing custom resources keep their data: " + strings.TrimSpace(text), true
}

// explainDeploy names the usual causes of a kapp failure in rukpak's words,
// and says whether the cause is an API the cluster does not serve.
func explainDeploy(detail string) (msg string, missingAPI bool) {
	if msg, ok := crdRefusal(detail); ok {
		return msg, false
	}
	switch {
	case strings.Contains(detail, "empty set of resources"):
		return "invalid bundle: " + zeroObjects, false
	case strings.Contains(detail, "Expected to find kind") || strings.Contains(detail, "no matches for kind") || strings.Contains(detail, "resource mapping not found") ||
		strings.Contains(detail, "could not find the requested resource"):
		return "required resource not found, ensure CRDs are installed first: " + detail, true
	}
	return detail, false
}

// aliasHint names the one input known to keep ytt busy without end. ytt
// expands YAML aliases without a limit, and kapp-controller gives its
// template step no timeout, so the App would say "Reconciling" for as long
// as memory lasts.
const aliasHint = `a YAML file has aliases that expand exponentially (a "billion laughs": ` +
	`look in the bundle's files for anchors and aliases nested inside each other)`

// outOfMemory explains a template step that the runtime or the kernel
// stopped for memory, keeping only the line that says so (the rest is a
// goroutine dump). Go's runtime says "out of memory" when its heap cannot
// grow, "cannot allocate memory" when the kernel refuses it more address
// space (a busy machine, or a limit on the sidecar); the kernel's OOM
// killer leaves "signal: killed".
func outOfMemory(detail string) (string, bool) {
	for _, line := range strings.Split(detail, "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, "out of memory") || strings.Contains(line, "runtime: cannot allocate memory") || strings.Contains(line, "signal: killed") {
			return fmt.Sprintf("ytt ran out of memory rendering the bundle (%s); the usual cause: %s", line, aliasHint), true
		}
	}
	return "", false
}

// Retrying is what a failure's message ends with when the adapter tries
// again: that it does, and when, if the next attempt's time is known (a
// fetch's backoff); "" when it does not try again.
func Retrying(retrying bool, next time.Time) string {
	switch {
	case !retrying:
		return ""
	case next.IsZero():
		return "; retrying with backoff"
	}
	return "; retrying with backoff, next attempt at " + next.UTC().Format(time.RFC3339)
}
