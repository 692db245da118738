package podspec

import (
	"io"
	"net"
)

// Spec describes one container run.
type Spec struct {
	Hostname string
	// Rootfs is the unpacked image; its mount points already exist.
	Rootfs string
	// ReadOnlyRoot mounts Rootfs read-only (readOnlyRootFilesystem).
	ReadOnlyRoot bool
	Mounts       []Mount
	UID, GID     uint32
	Argv         []string
	Env          []string
	WorkDir      string
	// Upstreams are addresses outside the pod it may reach: each listens
	// on Addr inside the pod's network and is carried over Socket, which
	// the harness serves.
	Upstreams []Forward
	// Ports are the pod's own ports: each is served on Socket, outside the
	// pod, and carried to Addr inside it, as a kubelet's probes reach it.
	Ports []Forward
}

// Mount is a tmpfs (Source empty) or a bind mount of Source at Target, a
// path inside the pod.
type Mount struct {
	Target    string
	Source    string
	ReadOnly  bool
	SizeBytes int64
}

// Forward pairs a TCP address inside the pod with a unix socket outside it.
type Forward struct {
	Addr   string
	Socket string
}

// Serve carries each connection of l to a new connection to network/addr,
// until l is closed.
func Serve(l net.Listener, network, addr string) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			out, err := net.Dial(network, addr)
			if err != nil {
				in.Close()
				return
			}
			Splice(in, out)
		}()
	}
}

// Splice copies a to b and b to a until either side ends, then closes
// both.
func Splice(a, b net.Conn) {
	defer a.Close()
	defer b.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(a, b); done <- struct{}{} }()
	go func() { _, _ = io.Copy(b, a); done <- struct{}{} }()
	<-done
}
