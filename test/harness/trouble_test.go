package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportTrouble(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etcd.log", "started\n{\"level\":\"fatal\",\"msg\":\"failed to write\",\"error\":\"write /x/wal: no space left on device\"}\n")
	write("kube-apiserver.log", "I0101 serving\nE0101 an ordinary error the test expects\n")
	var many strings.Builder
	for range 20 {
		many.WriteString("listen tcp 127.0.0.1:4000: bind: address already in use\n")
	}
	write("registry.log", many.String())

	var out strings.Builder
	reportTrouble(&out, dir)
	got := out.String()
	if !strings.Contains(got, "etcd.log says:") || !strings.Contains(got, "no space left on device") {
		t.Errorf("the full disk is not told:\n%s", got)
	}
	if strings.Contains(got, "kube-apiserver.log") {
		t.Errorf("a log with ordinary errors only is told:\n%s", got)
	}
	if n := strings.Count(got, "address already in use"); n != troubleLimit {
		t.Errorf("registry.log told %d times, want %d", n, troubleLimit)
	}

	out.Reset()
	reportTrouble(&out, t.TempDir())
	if out.Len() != 0 {
		t.Errorf("an empty log directory says %q", out.String())
	}
}
