package packaging_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"sigs.k8s.io/yaml"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// A failed spec prints every OperatorCatalog as it is, the catalog
// controller's workers and queue (the adapter's metrics: busy workers with
// nothing done say a reconcile hangs; none busy and nothing queued say no
// event came), and the adapter's last log lines about catalogs. CI keeps
// no harness directory, so this is all a failure there leaves.
var _ = JustAfterEach(func(ctx context.Context) {
	if !CurrentSpecReport().Failed() || env == nil {
		return
	}
	cats := &catalogsv1alpha1.OperatorCatalogList{}
	if err := env.Client.List(ctx, cats); err == nil {
		for _, c := range cats.Items {
			out, _ := yaml.Marshal(map[string]any{"generation": c.Generation, "finalizers": c.Finalizers, "status": c.Status})
			GinkgoWriter.Printf("--- OperatorCatalog %s/%s:\n%s\n", c.Namespace, c.Name, out)
		}
	}
	if env.Adapter != nil {
		GinkgoWriter.Printf("--- the adapter's catalog controller:\n%s", catalogMetrics(env.Adapter.MetricsURL))
	}
	GinkgoWriter.Printf("--- the adapter's last log lines about catalogs:\n%s", lastLines(filepath.Join(env.LogDir(), "rukpak-kapp.log"), "atalog", 30))
	GinkgoWriter.Printf("process logs are under %s (set KEEP_HARNESS_DIR=1 to keep them)\n", env.LogDir())
})

// catalogMetrics are the adapter's metric lines of the operatorcatalogs
// controller and its queue.
func catalogMetrics(url string) string {
	// An adapter that hangs must not hang the suite's report of it.
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		return err.Error() + "\n"
	}
	defer resp.Body.Close()
	var b strings.Builder
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if l := s.Text(); !strings.HasPrefix(l, "#") && strings.Contains(l, `"operatorcatalogs"`) && !strings.Contains(l, "_bucket") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// lastLines are the last n lines of a log that contain match, each cut
// at 400 bytes (an error's stack trace says nothing more here).
func lastLines(path, match string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error() + "\n"
	}
	defer f.Close()
	var kept []string
	r := bufio.NewReader(f)
	for {
		l, err := r.ReadString('\n')
		if strings.Contains(l, match) {
			if len(l) > 400 {
				l = l[:400] + "...\n"
			}
			kept = append(kept, l)
			if len(kept) > n {
				kept = kept[1:]
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			kept = append(kept, err.Error()+"\n")
			break
		}
	}
	return strings.Join(kept, "")
}
