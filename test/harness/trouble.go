package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// troubleLine matches what a component prints when the machine, not the
// code under test, failed it: a full disk, memory refused, a port taken, a
// crash. Such a cause is invisible in a spec's failure (a request that times
// out, a command that exits 1) and gone with the harness directory, so Stop
// prints the lines that carry it.
var troubleLine = regexp.MustCompile(`(?i)no space left on device|database space exceeded|cannot allocate memory|out of memory|address already in use|^panic: |fatal error: |signal: killed`)

// troubleLimit bounds the lines told per log, so a component that repeats
// its complaint does not flood the suite's output.
const troubleLimit = 5

// reportTrouble writes to w, per log under dir, the first lines that
// troubleLine matches, and says nothing when none does.
func reportTrouble(w io.Writer, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*"))
	slices.Sort(logs)
	for _, path := range logs {
		lines := troubleIn(path)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "harness: %s says:\n", filepath.Base(path))
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

// troubleIn is the first troubleLimit lines of the file that troubleLine
// matches, each cut to 300 bytes.
func troubleIn(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() && len(out) < troubleLimit {
		line := sc.Text()
		if !troubleLine.MatchString(line) {
			continue
		}
		if len(line) > 300 {
			line = line[:300] + "…"
		}
		out = append(out, strings.TrimSpace(line))
	}
	return out
}

// apiServicesTrouble says, for each APIService the control plane does not
// count as Available, why (its Available condition's reason and message:
// an aggregated API server that died, or an address kube-apiserver cannot
// reach). An aggregated API that fails makes unrelated requests of a suite
// fail or hang, and nothing else would name it.
func apiServicesTrouble(ctx context.Context, c client.Reader) []string {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("apiregistration.k8s.io/v1")
	list.SetKind("APIServiceList")
	if err := c.List(ctx, list); err != nil {
		return []string{"the APIServices could not be listed: " + err.Error()}
	}
	var out []string
	for _, s := range list.Items {
		conds, _, _ := unstructured.NestedSlice(s.Object, "status", "conditions")
		for _, raw := range conds {
			cond, _ := raw.(map[string]any)
			if cond["type"] == "Available" && cond["status"] != "True" {
				out = append(out, fmt.Sprintf("APIService %s is not Available: %v: %v", s.GetName(), cond["reason"], cond["message"]))
			}
		}
	}
	return out
}
