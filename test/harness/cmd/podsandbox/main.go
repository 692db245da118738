package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness/podspec"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: podsandbox SPEC.json")
		os.Exit(2)
	}
	code, err := run(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "podsandbox: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(specPath string) (int, error) {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return 0, err
	}
	var spec podspec.Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return 0, fmt.Errorf("read spec: %w", err)
	}
	if err := mountRoot(&spec); err != nil {
		return 0, err
	}
	if err := loopbackUp(); err != nil {
		return 0, err
	}
	if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
		return 0, fmt.Errorf("set the pod's hostname: %w", err)
	}
	for _, f := range spec.Upstreams {
		l, err := net.Listen("tcp", f.Addr)
		if err != nil {
			return 0, fmt.Errorf("listen on %s inside the pod: %w", f.Addr, err)
		}
		go podspec.Serve(l, "unix", f.Socket)
	}
	for _, f := range spec.Ports {
		_ = os.Remove(f.Socket)
		l, err := net.Listen("unix", f.Socket)
		if err != nil {
			return 0, fmt.Errorf("listen on %s: %w", f.Socket, err)
		}
		go podspec.Serve(l, "tcp", f.Addr)
	}
	// allowPrivilegeEscalation: false. Inherited by the container.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("set no_new_privs: %w", err)
	}
	cmd := &exec.Cmd{Path: spec.Argv[0], Args: spec.Argv, Env: spec.Env, Dir: spec.WorkDir, Stdout: os.Stdout, Stderr: os.Stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: spec.Rootfs, Pdeathsig: syscall.SIGKILL}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: spec.UID, Gid: spec.GID}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	return 0, err
}

// mountRoot builds the container's filesystem in this mount namespace.
func mountRoot(spec *podspec.Spec) error {
	root := spec.Rootfs
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount(root, root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind the image root: %w", err)
	}
	if err := unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	dev := filepath.Join(root, "dev")
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=755,size=65536k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		target := filepath.Join(dev, name)
		if err := os.WriteFile(target, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+name, target, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", name, err)
		}
	}
	for _, m := range spec.Mounts {
		target := filepath.Join(root, m.Target)
		if m.Source == "" {
			opts := "mode=1777"
			if m.SizeBytes > 0 {
				opts += ",size=" + strconv.FormatInt(m.SizeBytes, 10)
			}
			if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
				return fmt.Errorf("mount an emptyDir at %s: %w", m.Target, err)
			}
			continue
		}
		if err := unix.Mount(m.Source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s at %s: %w", m.Source, m.Target, err)
		}
		if m.ReadOnly {
			if err := remountReadOnly(target); err != nil {
				return err
			}
		}
	}
	if spec.ReadOnlyRoot {
		return remountReadOnly(root)
	}
	return nil
}

// remountReadOnly keeps the flags the kernel locked on the mount (nosuid,
// nodev in a user namespace) and adds read-only.
func remountReadOnly(target string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(target, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range []struct{ st, ms int }{{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME}} {
		if int(st.Flags)&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	if err := unix.Mount("", target, "", flags, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", target, err)
	}
	return nil
}

// loopbackUp brings up lo in the pod's new network namespace, where it
// starts down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}
