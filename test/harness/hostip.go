package harness

import (
	"errors"
	"net"
)

// HostIP is a non-loopback IPv4 address of this machine: kube-apiserver
// refuses loopback addresses in Endpoints and EndpointSlices, so servers a
// Service must lead to (webhooks, aggregated API servers) listen here.
func HostIP() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String(), nil
		}
	}
	return "", errors.New("this machine has no non-loopback IPv4 address for a Service to lead to")
}
