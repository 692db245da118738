package harness

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness/podspec"
)

// serviceAccountDir is where a pod finds its ServiceAccount's token, CA and
// namespace, and where client-go's in-cluster config reads them.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// maxRootfs caps what an image may unpack to.
const maxRootfs = 1 << 30

// Pod is one container of a pod spec running from its image on this
// machine, as a kubelet would run it (test/harness/cmd/podsandbox): the
// image's filesystem (read-only if the spec says so) with the pod's
// emptyDirs and ServiceAccount token mounted, its own PID and network
// namespaces, the in-cluster API server address, and its ports reachable
// through Pod.HTTPClient. No container runtime; it needs root, and the
// entrypoint runs as the image's (or the spec's) user.
type Pod struct {
	Name    string
	LogPath string
	proc    *process
	sockets map[int32]string
	serving []net.Listener
}

// PodOptions name the pod and what it runs.
type PodOptions struct {
	Name      string
	Namespace string
	// Spec is a pod template's spec; its first container runs. The image
	// must be in one of the harness's plain-HTTP registries.
	Spec corev1.PodSpec
	// Reach lists host:port addresses on this machine the pod may reach at
	// the same address; the API server is always reachable.
	Reach []string
}

// StartPod pulls the container's image, unpacks it and starts it.
func (e *Env) StartPod(ctx context.Context, opts PodOptions) (*Pod, error) {
	if len(opts.Spec.Containers) != 1 {
		return nil, fmt.Errorf("pod %s: want one container, the spec has %d", opts.Name, len(opts.Spec.Containers))
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("running a pod needs root, to make its namespaces and mounts and to run it as the image's user (CI runs as root)")
	}
	c := opts.Spec.Containers[0]
	dir, err := os.MkdirTemp(e.Dir, "pod-"+opts.Name+"-")
	if err != nil {
		return nil, err
	}
	img, err := pullImage(ctx, c.Image)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read the config of %s: %w", c.Image, err)
	}
	rootfs := filepath.Join(dir, "rootfs")
	if err := unpack(img, rootfs); err != nil {
		return nil, fmt.Errorf("unpack %s: %w", c.Image, err)
	}
	spec := podspec.Spec{Hostname: opts.Name, Rootfs: rootfs, WorkDir: cfg.Config.WorkingDir}
	if spec.WorkDir == "" {
		spec.WorkDir = "/"
	}
	if spec.UID, spec.GID, err = runAs(cfg.Config.User, opts.Spec.SecurityContext, c.SecurityContext); err != nil {
		return nil, fmt.Errorf("pod %s: %w", opts.Name, err)
	}
	if sc := c.SecurityContext; sc != nil && sc.ReadOnlyRootFilesystem != nil {
		spec.ReadOnlyRoot = *sc.ReadOnlyRootFilesystem
	}
	if spec.Argv, err = argv(cfg.Config, c); err != nil {
		return nil, fmt.Errorf("pod %s: %w", opts.Name, err)
	}
	if spec.Mounts, err = volumeMounts(opts.Spec, c); err != nil {
		return nil, fmt.Errorf("pod %s: %w", opts.Name, err)
	}
	if opts.Spec.AutomountServiceAccountToken == nil || *opts.Spec.AutomountServiceAccountToken {
		saDir := filepath.Join(dir, "serviceaccount")
		if err := e.writeServiceAccount(ctx, saDir, opts.Namespace, opts.Spec.ServiceAccountName); err != nil {
			return nil, err
		}
		spec.Mounts = append(spec.Mounts, podspec.Mount{Target: serviceAccountDir, Source: saDir, ReadOnly: true})
	}
	for _, target := range append([]string{"/proc", "/dev"}, mountTargets(spec.Mounts)...) {
		if err := os.MkdirAll(filepath.Join(rootfs, target), 0o755); err != nil {
			return nil, fmt.Errorf("make mount point %s: %w", target, err)
		}
	}
	apiAddr := fmt.Sprintf("127.0.0.1:%d", e.ControlPlane.Port)
	if spec.Env, err = podEnv(cfg.Config.Env, c, opts.Name, rootfs, spec.UID, e.ControlPlane.Port); err != nil {
		return nil, fmt.Errorf("pod %s: %w", opts.Name, err)
	}

	p := &Pod{Name: opts.Name, sockets: map[int32]string{}}
	for i, addr := range append([]string{apiAddr}, opts.Reach...) {
		sock := filepath.Join(dir, fmt.Sprintf("up-%d.sock", i))
		l, err := net.Listen("unix", sock)
		if err != nil {
			p.closeSockets()
			return nil, err
		}
		p.serving = append(p.serving, l)
		go podspec.Serve(l, "tcp", addr)
		spec.Upstreams = append(spec.Upstreams, podspec.Forward{Addr: addr, Socket: sock})
	}
	for _, port := range podPorts(c) {
		sock := filepath.Join(dir, fmt.Sprintf("port-%d.sock", port))
		p.sockets[port] = sock
		spec.Ports = append(spec.Ports, podspec.Forward{Addr: fmt.Sprintf("127.0.0.1:%d", port), Socket: sock})
	}

	specPath := filepath.Join(dir, "spec.json")
	data, err := json.Marshal(spec)
	if err != nil {
		p.closeSockets()
		return nil, err
	}
	if err := os.WriteFile(specPath, data, 0o600); err != nil {
		p.closeSockets()
		return nil, err
	}
	sandbox, err := GoBinary(ctx, e.Root, "./test/harness/cmd/podsandbox", filepath.Join(e.Dir, "podsandbox"))
	if err != nil {
		p.closeSockets()
		return nil, err
	}
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWUTS}
	if p.proc, err = startProcessWith("pod-"+opts.Name, dir, nil, e.tools.logDir, attr, sandbox, specPath); err != nil {
		p.closeSockets()
		return nil, err
	}
	p.LogPath = p.proc.logPath
	return p, nil
}

// HTTPClient reaches the pod's ports (its containerPorts and probe ports)
// at 127.0.0.1:PORT, as a kubelet's probes and a metrics scraper would.
func (p *Pod) HTTPClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			_, portStr, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			port, _ := strconv.Atoi(portStr)
			sock, ok := p.sockets[int32(port)]
			if !ok {
				return nil, fmt.Errorf("pod %s declares no port %d", p.Name, port)
			}
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

// ServeOnHost forwards a port of this machine's non-loopback address
// (HostIP) to the pod's port, as a Service's endpoint reaches a pod, so
// that kube-apiserver can call a webhook the pod serves (RouteToHost). It
// returns the address; the forwarding ends when the pod stops.
func (p *Pod) ServeOnHost(port int32) (string, int32, error) {
	sock, ok := p.sockets[port]
	if !ok {
		return "", 0, fmt.Errorf("pod %s declares no port %d", p.Name, port)
	}
	ip, err := HostIP()
	if err != nil {
		return "", 0, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", 0, fmt.Errorf("listen for pod %s's port %d: %w", p.Name, port, err)
	}
	p.serving = append(p.serving, l)
	go podspec.Serve(l, "unix", sock)
	return ip, int32(l.Addr().(*net.TCPAddr).Port), nil
}

// Exited reports whether the pod's container ended, and how.
func (p *Pod) Exited() (bool, error) { return p.proc.Exited() }

// Stop sends SIGTERM, as a kubelet does, and SIGKILL after grace.
func (p *Pod) Stop(grace time.Duration) {
	p.proc.Stop(grace)
	p.closeSockets()
}

func (p *Pod) closeSockets() {
	for _, l := range p.serving {
		_ = l.Close()
	}
}

func pullImage(ctx context.Context, image string) (v1.Image, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return nil, fmt.Errorf("image %q: %w", image, err)
	}
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
	if err != nil {
		return nil, fmt.Errorf("pull %s for linux/%s: %w", image, runtime.GOARCH, err)
	}
	return img, nil
}

// unpack writes the image's files under dir. Only directories and regular
// files are taken (the images the harness runs have nothing else), every
// path must stay inside dir, and the total is capped.
func unpack(img v1.Image, dir string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var total int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(filepath.Clean("/"+hdr.Name), "/")
		if rel == "" {
			continue
		}
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("entry %q leaves the image root", hdr.Name)
		}
		target := filepath.Join(dir, rel)
		mode := os.FileMode(hdr.Mode).Perm()
		if hdr.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(target, mode); err != nil {
				return err
			}
			if err := os.Lchown(target, hdr.Uid, hdr.Gid); err != nil {
				return err
			}
		case tar.TypeReg:
			if total += hdr.Size; total > maxRootfs {
				return fmt.Errorf("the image unpacks to more than %d bytes", maxRootfs)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, io.LimitReader(tr, hdr.Size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Lchown(target, hdr.Uid, hdr.Gid)
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q is of type %q; the harness unpacks only files and directories", hdr.Name, hdr.Typeflag)
		}
	}
}

// runAs is the user a kubelet runs the container as: the security
// context's, else the image's, which must then be numeric for runAsNonRoot
// to be checked.
func runAs(imageUser string, pod *corev1.PodSecurityContext, c *corev1.SecurityContext) (uint32, uint32, error) {
	var uid, gid *int64
	var nonRoot *bool
	if pod != nil {
		uid, gid, nonRoot = pod.RunAsUser, pod.RunAsGroup, pod.RunAsNonRoot
	}
	if c != nil {
		if c.RunAsUser != nil {
			uid = c.RunAsUser
		}
		if c.RunAsGroup != nil {
			gid = c.RunAsGroup
		}
		if c.RunAsNonRoot != nil {
			nonRoot = c.RunAsNonRoot
		}
	}
	if uid == nil {
		u, g, _ := strings.Cut(imageUser, ":")
		n, err := strconv.ParseInt(u, 10, 64)
		if err != nil {
			if nonRoot != nil && *nonRoot {
				return 0, 0, fmt.Errorf("runAsNonRoot is set and the image's user %q is not numeric, so a kubelet cannot verify it is not root", imageUser)
			}
			return 0, 0, fmt.Errorf("image user %q: the harness runs numeric users only", imageUser)
		}
		uid = &n
		if g != "" && gid == nil {
			ng, err := strconv.ParseInt(g, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("image group %q: not numeric", g)
			}
			gid = &ng
		}
	}
	if nonRoot != nil && *nonRoot && *uid == 0 {
		return 0, 0, errors.New("runAsNonRoot is set and the container would run as root")
	}
	if gid == nil {
		gid = new(int64)
	}
	return uint32(*uid), uint32(*gid), nil
}

// argv follows Kubernetes: command replaces the image's entrypoint (and
// drops its cmd), args replace its cmd.
func argv(cfg v1.Config, c corev1.Container) ([]string, error) {
	cmd, args := cfg.Entrypoint, cfg.Cmd
	if len(c.Command) > 0 {
		cmd, args = c.Command, nil
	}
	if len(c.Args) > 0 {
		args = c.Args
	}
	out := append(append([]string{}, cmd...), args...)
	if len(out) == 0 || !strings.HasPrefix(out[0], "/") {
		return nil, fmt.Errorf("the container's command %q is not an absolute path (the image has no shell or PATH lookup)", out)
	}
	return out, nil
}

// volumeMounts turns the container's mounts of emptyDir volumes into
// size-capped tmpfs mounts; other volume kinds are not run here.
func volumeMounts(pod corev1.PodSpec, c corev1.Container) ([]podspec.Mount, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	var out []podspec.Mount
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s names no volume", m.Name)
		}
		if v.EmptyDir == nil {
			return nil, fmt.Errorf("volume %s: only emptyDir volumes are run here", m.Name)
		}
		mount := podspec.Mount{Target: m.MountPath, ReadOnly: m.ReadOnly}
		if v.EmptyDir.SizeLimit != nil {
			mount.SizeBytes = v.EmptyDir.SizeLimit.Value()
		}
		out = append(out, mount)
	}
	return out, nil
}

func mountTargets(mounts []podspec.Mount) []string {
	var out []string
	for _, m := range mounts {
		out = append(out, m.Target)
	}
	return out
}

// podEnv is the image's environment, then the container's, then what a
// kubelet adds: the API server's in-cluster address, HOSTNAME and HOME.
func podEnv(imageEnv []string, c corev1.Container, podName, rootfs string, uid uint32, apiPort int) ([]string, error) {
	env := append([]string{}, imageEnv...)
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			return nil, fmt.Errorf("env %s: valueFrom is not run here", e.Name)
		}
		env = append(env, e.Name+"="+e.Value)
	}
	env = append(env, "KUBERNETES_SERVICE_HOST=127.0.0.1", fmt.Sprintf("KUBERNETES_SERVICE_PORT=%d", apiPort), "HOSTNAME="+podName)
	for _, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			return env, nil
		}
	}
	return append(env, "HOME="+homeOf(rootfs, uid)), nil
}

// homeOf is uid's home in the image's /etc/passwd, "/" without one.
func homeOf(rootfs string, uid uint32) string {
	f, err := os.Open(filepath.Join(rootfs, "etc", "passwd"))
	if err != nil {
		return "/"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Split(s.Text(), ":")
		if len(fields) >= 6 && fields[2] == strconv.FormatUint(uint64(uid), 10) {
			return fields[5]
		}
	}
	return "/"
}

// podPorts are the container's declared ports and the ports its HTTP
// probes use.
func podPorts(c corev1.Container) []int32 {
	named := map[string]int32{}
	seen := map[int32]bool{}
	var out []int32
	add := func(p int32) {
		if p > 0 && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range c.Ports {
		named[p.Name] = p.ContainerPort
		add(p.ContainerPort)
	}
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if probe == nil || probe.HTTPGet == nil {
			continue
		}
		if probe.HTTPGet.Port.IntVal != 0 {
			add(probe.HTTPGet.Port.IntVal)
		} else {
			add(named[probe.HTTPGet.Port.StrVal])
		}
	}
	return out
}

// writeServiceAccount lays out what a kubelet projects into every pod of
// the account: a fresh token, the cluster's CA and the namespace.
func (e *Env) writeServiceAccount(ctx context.Context, dir, ns, account string) error {
	if account == "" {
		account = "default"
	}
	expiry := int64(60 * 60)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: account}}
	if err := e.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return fmt.Errorf("request a token for %s/%s: %w", ns, account, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": e.ControlPlane.CAData, "namespace": []byte(ns)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
