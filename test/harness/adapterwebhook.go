package harness

import (
	"context"
	"fmt"
	"net"
	"strconv"
)

// Names of config/webhook.
const (
	AdapterWebhookService  = "rukpak-kapp-webhook"
	adapterWebhookPortName = "webhook"
)

// AdapterWebhookAddress is where the adapter's webhooks listen on this
// machine (a non-loopback address, see HostIP), with the Service of
// config/webhook routed to it, as a cluster routes it to the adapter's
// pods. It is chosen once per harness, so a restarted adapter, in this
// process or as the binary, is reached at the same place.
func (e *Env) AdapterWebhookAddress(ctx context.Context) (string, error) {
	e.webhookMu.Lock()
	defer e.webhookMu.Unlock()
	if e.webhookAddr != "" {
		return e.webhookAddr, nil
	}
	ip, err := HostIP()
	if err != nil {
		return "", err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", fmt.Errorf("find a port for the adapter's webhooks: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	if err := e.RouteToHost(ctx, SystemNamespace, AdapterWebhookService, adapterWebhookPortName, ip, int32(port)); err != nil {
		return "", err
	}
	e.webhookAddr = net.JoinHostPort(ip, strconv.Itoa(port))
	return e.webhookAddr, nil
}
