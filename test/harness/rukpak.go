package harness

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Rukpak is rukpak v0.24.0 run out of cluster against the harness, with the
// admin kubeconfig: cmd/core (the plain and registry+v1 provisioners) and,
// when asked for, cmd/helm (the helm provisioner). Each keeps its bundle
// storage under the harness directory, so a restart finds its cache.
type Rukpak struct {
	env  *Env
	helm bool
	core *process
	hp   *process
}

// RukpakBinaries are the binaries test/tools builds from rukpak v0.24.0.
const (
	rukpakCoreBinary = "rukpak-core"
	rukpakHelmBinary = "rukpak-helm"
)

// StartRukpak starts rukpak's core provisioner, and its helm provisioner
// when helm is set, and waits until they serve health probes.
func (e *Env) StartRukpak(ctx context.Context, helm bool) (*Rukpak, error) {
	r := &Rukpak{env: e, helm: helm}
	return r, r.Start(ctx)
}

// Start starts the processes that are not running.
func (r *Rukpak) Start(ctx context.Context) error {
	if r.running() {
		return nil
	}
	var err error
	if r.core, err = r.start(ctx, rukpakCoreBinary, "--provisioner-storage-dir"); err != nil {
		return err
	}
	if r.helm {
		if r.hp, err = r.start(ctx, rukpakHelmBinary, "--storage-dir"); err != nil {
			r.core.Stop(5 * time.Second)
			return err
		}
	}
	return nil
}

func (r *Rukpak) start(ctx context.Context, name, storageFlag string) (*process, error) {
	return r.env.startRukpakProcess(ctx, name, "v0.24.0", []string{"storage", "unpack"}, func(dir, addr, probe string) []string {
		return []string{"--kubeconfig", r.env.ControlPlane.Kubeconfig,
			"--system-namespace", SystemNamespace,
			storageFlag, filepath.Join(dir, "storage"),
			"--unpack-cache-dir", filepath.Join(dir, "unpack"),
			"--http-bind-address", addr, "--http-external-address", "http://" + addr,
			"--health-probe-bind-address", probe}
	})
}

// startRukpakProcess runs the rukpak binary name (of rukpak version) in a
// directory of its own holding dirs, with the flags args gives for its HTTP
// and probe addresses, and waits until it serves its health probe.
func (e *Env) startRukpakProcess(ctx context.Context, name, version string, dirs []string, args func(dir, addr, probe string) []string) (*process, error) {
	dir := filepath.Join(e.Dir, name)
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	probe := fmt.Sprintf("127.0.0.1:%d", ports[1])
	return e.startTool(ctx, name, "rukpak "+version, dir, probe, args(dir, addr, probe))
}

// startTool runs the tool bin/name (what names it in an error) in dir and
// waits until its health probe at probe answers.
func (e *Env) startTool(ctx context.Context, name, what, dir, probe string, args []string) (*process, error) {
	bin := filepath.Join(e.tools.bin, name)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s is not built; run `make tools`: %w", what, err)
	}
	p, err := startProcess(name, dir, e.tools.base, e.tools.logDir, bin, args...)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Timeout: time.Second}
	if err := p.waitFor(ctx, 30*time.Second, "health probe", func() error { return httpOK(c, "http://"+probe+"/healthz", "") }); err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	return p, nil
}

func (r *Rukpak) running() bool {
	if r.core == nil {
		return false
	}
	exited, _ := r.core.Exited()
	return !exited
}

// Pids are the running processes' ids.
func (r *Rukpak) Pids() []int {
	var out []int
	for _, p := range []*process{r.core, r.hp} {
		if pid := p.Pid(); pid != 0 {
			out = append(out, pid)
		}
	}
	return out
}

// Stop ends rukpak gracefully.
func (r *Rukpak) Stop() {
	r.core.Stop(10 * time.Second)
	r.hp.Stop(10 * time.Second)
}
