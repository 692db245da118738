package harness

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ControlPlane is etcd plus kube-apiserver on loopback.
type ControlPlane struct {
	Dir        string
	Port       int
	CAData     []byte
	Kubeconfig string
	Config     *rest.Config
	// AuditLog is the API server's audit log (JSON lines), when asked for.
	AuditLog string

	etcd, apiserver, kcm *process
	token                string
	etcdURL              string
	env                  *toolEnv
}

type toolEnv struct {
	bin    string
	logDir string
	base   []string
	// gc goes after the environment of the processes that spend most of a
	// suite's CPU: kube-apiserver, etcd, kube-controller-manager, the fake
	// nodes and kapp-controller's manager. With GOGC=400 kube-apiserver
	// used 14% and kapp-controller 16% less CPU in the packaging suite
	// (docs/benchmarks.md, "The harness's garbage collection"). The
	// adapter, rukpak and kapp-controller's sidecar, which runs ytt and
	// helm under the harness's memory cap, keep Go's default.
	gc []string
	// view, when set, is how the adapter and kapp-controller see the
	// network (fetchview.go).
	view *fetchView
}

// withGC is env with gc after it (a later entry wins).
func (t *toolEnv) withGC(env []string) []string {
	return append(slices.Clone(env), t.gc...)
}

func startControlPlane(ctx context.Context, t *toolEnv, dir string, audit bool) (*ControlPlane, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, fmt.Errorf("pick ports: %w", err)
	}
	cp := &ControlPlane{Dir: dir, Port: ports[2], token: "rukpak-kapp-admin-token", env: t}
	if err := cp.writeKeys(); err != nil {
		return nil, err
	}
	if audit {
		if err := cp.writeAuditPolicy(); err != nil {
			return nil, err
		}
	}
	etcdURL := "http://127.0.0.1:" + itoa(ports[0])
	cp.etcdURL = etcdURL
	cp.etcd, err = startProcess("etcd", dir, t.withGC(t.base), t.logDir, filepath.Join(t.bin, "etcd"),
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:"+itoa(ports[1]),
		"--initial-advertise-peer-urls", "http://127.0.0.1:"+itoa(ports[1]),
		"--initial-cluster", "default=http://127.0.0.1:"+itoa(ports[1]),
		"--unsafe-no-fsync", "--quota-backend-bytes", "8589934592")
	if err != nil {
		return nil, err
	}
	if err := cp.etcd.waitFor(ctx, 30*time.Second, "etcd health", func() error {
		return httpOK(&http.Client{Timeout: time.Second}, etcdURL+"/health", "")
	}); err != nil {
		cp.Stop()
		return nil, err
	}
	// A port picked free may be taken before kube-apiserver binds it (by
	// another suite's process, or an outgoing connection's local port):
	// then it starts again on another.
	for attempt := 1; ; attempt++ {
		err := cp.startAPIServer(ctx, etcdURL)
		if err == nil {
			return cp, nil
		}
		if attempt == 3 || !cp.apiserver.boundTaken() {
			cp.Stop()
			return nil, err
		}
		if cp.Port, err = freePort(); err != nil {
			cp.Stop()
			return nil, fmt.Errorf("pick a port: %w", err)
		}
	}
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, etcdURL string) error {
	certDir := filepath.Join(cp.Dir, "certs")
	var err error
	args := []string{
		"--etcd-servers", etcdURL,
		"--secure-port", itoa(cp.Port),
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--endpoint-reconciler-type", "none",
		"--cert-dir", certDir,
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--authorization-mode", "RBAC",
		"--token-auth-file", filepath.Join(cp.Dir, "tokens.csv"),
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", filepath.Join(cp.Dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(cp.Dir, "sa.key"),
		"--enable-aggregator-routing=true",
		// The front proxy: how kube-apiserver proves to an aggregated API
		// server (kapp-controller's packaging API) whom it forwards a
		// request for. It publishes these in kube-system's
		// extension-apiserver-authentication ConfigMap, where the
		// aggregated server reads them.
		"--requestheader-client-ca-file", filepath.Join(cp.Dir, "front-proxy-ca.crt"),
		"--requestheader-allowed-names", frontProxyClient,
		"--requestheader-username-headers", "X-Remote-User",
		"--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--proxy-client-cert-file", filepath.Join(cp.Dir, "front-proxy-client.crt"),
		"--proxy-client-key-file", filepath.Join(cp.Dir, "front-proxy-client.key"),
		// No client uses certificates here, but aggregated servers read
		// this CA from the same ConfigMap and log an error while it is
		// missing.
		"--client-ca-file", filepath.Join(cp.Dir, "client-ca.crt"),
		// Tests create CRDs and delete them seconds later. With the watch
		// cache on, the CRD finalizer then fails with "storage is
		// (re)initializing" and backs off for minutes; without it, deletion
		// is immediate, as on a cluster where CRDs live longer than that.
		"--watch-cache=false",
	}
	if cp.AuditLog != "" {
		args = append(args, "--audit-policy-file", filepath.Join(cp.Dir, "audit-policy.yaml"),
			"--audit-log-path", cp.AuditLog, "--audit-log-format=json", "--audit-log-maxsize=0")
	}
	cp.apiserver, err = startProcess("kube-apiserver", cp.Dir, cp.env.withGC(cp.env.base), cp.env.logDir, filepath.Join(cp.env.bin, "kube-apiserver"), args...)
	if err != nil {
		return err
	}
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", cp.Port)
	if err := cp.apiserver.waitFor(ctx, 120*time.Second, "kube-apiserver readiness", func() error {
		return httpOK(insecure, url, cp.token)
	}); err != nil {
		return err
	}
	cp.CAData, err = os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("read apiserver certificate: %w", err)
	}
	cp.Config = &rest.Config{
		Host:            fmt.Sprintf("https://127.0.0.1:%d", cp.Port),
		BearerToken:     cp.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAData},
		QPS:             100,
		Burst:           200,
	}
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	return cp.WriteKubeconfig(cp.Kubeconfig, "default")
}

// writeAuditPolicy logs one metadata line per request, when it completes:
// enough to count requests and writes by user and user agent.
func (cp *ControlPlane) writeAuditPolicy() error {
	cp.AuditLog = filepath.Join(cp.Dir, "audit.log")
	policy := "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived, ResponseStarted]\nrules:\n- level: Metadata\n"
	return os.WriteFile(filepath.Join(cp.Dir, "audit-policy.yaml"), []byte(policy), 0o644)
}

// WriteKubeconfig writes an admin kubeconfig whose context uses namespace ns.
func (cp *ControlPlane) WriteKubeconfig(path, ns string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: cp.Config.Host, CertificateAuthorityData: cp.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cp.token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin", Namespace: ns}
	cfg.CurrentContext = "local"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// RestartAPIServer stops and starts kube-apiserver on the same port and data.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context) error {
	cp.StopAPIServer()
	return cp.StartAPIServer(ctx)
}

// StopAPIServer stops kube-apiserver; etcd keeps the data. Every client's
// requests fail until StartAPIServer.
func (cp *ControlPlane) StopAPIServer() { cp.apiserver.Stop(10 * time.Second) }

// StartAPIServer starts kube-apiserver again on the same port and data and
// waits until it is ready.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	return cp.startAPIServer(ctx, cp.etcdURL)
}

// Stop ends kube-apiserver, then etcd.
func (cp *ControlPlane) Stop() {
	cp.kcm.Stop(10 * time.Second)
	cp.apiserver.Stop(10 * time.Second)
	cp.etcd.Stop(10 * time.Second)
}

// frontProxyClient is the name in kube-apiserver's front-proxy client
// certificate, the only one aggregated API servers accept.
const frontProxyClient = "front-proxy-client"

func (cp *ControlPlane) writeKeys() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	frontProxyCA, err := NewTestCA("rukpak-kapp test front-proxy CA")
	if err != nil {
		return err
	}
	proxyCert, proxyKey, err := frontProxyCA.ClientCertPEM(frontProxyClient)
	if err != nil {
		return err
	}
	clientCA, err := NewTestCA("rukpak-kapp test client CA")
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"sa.key":                 pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub":                 pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"tokens.csv":             []byte(cp.token + ",admin,admin,system:masters\n"),
		"front-proxy-ca.crt":     frontProxyCA.PEM,
		"front-proxy-client.crt": proxyCert,
		"front-proxy-client.key": proxyKey,
		"client-ca.crt":          clientCA.PEM,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(cp.Dir, name), data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

func httpOK(c *http.Client, url, token string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// Pids are etcd's and kube-apiserver's process ids, for their CPU time.
func (cp *ControlPlane) Pids() []int { return []int{cp.etcd.Pid(), cp.apiserver.Pid()} }
