// Command podsandbox runs one container the way a kubelet would, without a
// container runtime: the harness starts it in new mount, PID, network and UTS
// namespaces, it mounts the
// image's root read-only with the pod's volumes and /proc and /dev, brings
// up the pod's loopback, forwards the addresses the pod may reach and the
// pod's own ports over unix sockets, then runs the entrypoint chrooted in
// the image as the image's user, with no privilege left to gain. It needs
// root (CI runs as root): the container's user is a real host user, as
// with a container runtime.
//
// It may import test/harness/podspec only.
package main
