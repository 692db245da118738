package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// adapterWebhookSecret holds the adapter's webhook CA (config/webhook).
const adapterWebhookSecret = "rukpak-kapp-webhook-certs"

// ContentClient is an HTTP client that trusts the adapter's webhook
// server as a pod in the cluster would: by the CA the adapter keeps in the
// system namespace, for the name of its Service, whatever address a
// contentURL names.
func (e *Env) ContentClient(ctx context.Context) (*http.Client, error) {
	secret := &corev1.Secret{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: SystemNamespace, Name: adapterWebhookSecret}, secret); err != nil {
		return nil, fmt.Errorf("read the adapter's webhook CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(secret.Data["ca.crt"]) {
		return nil, fmt.Errorf("the Secret %s holds no CA certificate", adapterWebhookSecret)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: AdapterWebhookService + "." + SystemNamespace + ".svc", MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: tr, Timeout: time.Minute}, nil
}
