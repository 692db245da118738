package webhooks

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
)

// Defaults of config/webhook.
const (
	DefaultService = "rukpak-kapp-webhook"
	DefaultSecret  = "rukpak-kapp-webhook-certs"
	DefaultAddress = ":9443"
)

// Options configure the server.
type Options struct {
	// Address is host:port to listen on.
	Address string
	// Namespace holds the Service and the certificate Secret.
	Namespace string
	// Service is the Service the API server calls; the serving
	// certificate is for its DNS names.
	Service string
	// Secret names the certificate Secret.
	Secret string
}

// Server is the adapter's webhook server. Handlers and caBundle targets are
// added before the manager starts.
type Server struct {
	opts    Options
	server  crwebhook.Server
	scheme  *runtime.Scheme
	mgr     ctrl.Manager
	mu      sync.Mutex
	targets []Target
	started bool
	serving atomic.Pointer[tls.Certificate]
	kick    chan struct{}
}

// DefaultOptions are config/webhook's names in namespace, listening on
// address.
func DefaultOptions(address, namespace string) Options {
	return Options{Address: address, Namespace: namespace, Service: DefaultService, Secret: DefaultSecret}
}

// New adds a webhook server, and the certificates it serves with, to mgr.
// Both run on every replica: an admission webhook must answer whichever
// replica the Service picks. An address of "" or "0" turns webhooks off:
// New returns nil, and the webhooks that would use it are not added.
func New(mgr ctrl.Manager, o Options) (*Server, error) {
	if o.Address == "" || o.Address == "0" {
		return nil, nil
	}
	host, portText, err := net.SplitHostPort(o.Address)
	if err != nil {
		return nil, fmt.Errorf("webhook address %q: %w", o.Address, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 {
		return nil, fmt.Errorf("webhook address %q: the port must be a positive number", o.Address)
	}
	if o.Namespace == "" || o.Service == "" || o.Secret == "" {
		return nil, errors.New("webhook: namespace, service and secret must be named")
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	s := &Server{opts: o, scheme: scheme, mgr: mgr, kick: make(chan struct{}, 1)}
	s.server = crwebhook.NewServer(crwebhook.Options{
		Host: host, Port: port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = tls.VersionTLS12
			c.GetCertificate = s.certificate
		}},
	})
	// One runnable of the manager's webhook group, which starts before the
	// caches sync: the certificates must be served by then, for the cache
	// of BundleDeployments stored as v1alpha1 lists them through the
	// conversion webhook this server serves.
	if err := mgr.Add(s); err != nil {
		return nil, fmt.Errorf("add webhook server: %w", err)
	}
	return s, nil
}

var _ crwebhook.Server = &Server{}

// StartedChecker is healthy once the server listens.
func (s *Server) StartedChecker() healthz.Checker { return s.server.StartedChecker() }

// WebhookMux is the server's mux.
func (s *Server) WebhookMux() *http.ServeMux { return s.server.WebhookMux() }

// Register serves h at path.
func (s *Server) Register(path string, h http.Handler) { s.server.Register(path, h) }

// AddCABundleTarget has the server keep its CA in t's caBundle. One target
// per kind.
func (s *Server) AddCABundleTarget(t Target) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("caBundle targets are added before the manager starts")
	}
	for _, o := range s.targets {
		if fmt.Sprintf("%T", o.Object) == fmt.Sprintf("%T", t.Object) {
			return fmt.Errorf("a caBundle target of kind %T is registered already", t.Object)
		}
	}
	s.targets = append(s.targets, t)
	return nil
}

// NeedLeaderElection is false: every replica serves.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves the webhooks and keeps the certificates and caBundles
// right until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	done := make(chan error, 2)
	go func() { done <- s.keep(ctx) }()
	go func() { done <- s.server.Start(ctx) }()
	// Either ends early only on an error, which stops the manager; both
	// end when ctx does.
	if err := <-done; err != nil {
		return err
	}
	return <-done
}

// keep keeps the certificates and caBundles right until ctx ends.
func (s *Server) keep(ctx context.Context) error {
	s.mu.Lock()
	s.started = true
	targets := append([]Target(nil), s.targets...)
	s.mu.Unlock()
	logger := log.FromContext(ctx).WithName("webhook-certificates")

	// A cache of exactly the Secret and the targets, by name: the
	// manager's own cache would keep every Secret of the namespace on every
	// replica, and whole objects of every webhook configuration or CRD.
	byObject := map[client.Object]cache.ByObject{
		&corev1.Secret{}: {
			Namespaces: map[string]cache.Config{s.opts.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", s.opts.Secret),
		},
	}
	for _, t := range targets {
		byObject[t.Object.DeepCopyObject().(client.Object)] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", t.Object.GetName())}
	}
	c, err := cache.New(s.mgr.GetConfig(), cache.Options{Scheme: s.scheme, Mapper: s.mgr.GetRESTMapper(), HTTPClient: s.mgr.GetHTTPClient(), ByObject: byObject})
	if err != nil {
		return fmt.Errorf("webhook certificates: create cache: %w", err)
	}
	writer, err := client.New(s.mgr.GetConfig(), client.Options{Scheme: s.scheme, Mapper: s.mgr.GetRESTMapper(), HTTPClient: s.mgr.GetHTTPClient()})
	if err != nil {
		return fmt.Errorf("webhook certificates: create client: %w", err)
	}
	for obj := range byObject {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("webhook certificates: watch %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.poke() },
			UpdateFunc: func(any, any) { s.poke() },
			DeleteFunc: func(any) { s.poke() },
		}); err != nil {
			return err
		}
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			logger.Error(err, "cache stopped")
		}
	}()
	if !c.WaitForCacheSync(ctx) {
		return ctx.Err()
	}

	const minBackoff, maxBackoff = time.Second, 5 * time.Minute
	backoff := minBackoff
	for {
		next, err := s.sync(ctx, c, writer, targets)
		wait := time.Until(next)
		if err != nil {
			logger.Error(err, "keeping the webhook certificates", "retryIn", backoff)
			wait, backoff = backoff, min(2*backoff, maxBackoff)
		} else {
			backoff = minBackoff
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-s.kick:
		case <-timer.C:
		}
		timer.Stop()
	}
}

func (s *Server) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// sync makes the Secret hold the plan, serves its certificate and puts its
// CA into every target; it returns when to look again.
func (s *Server) sync(ctx context.Context, c client.Reader, writer client.Client, targets []Target) (time.Time, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: s.opts.Secret}, secret)
	switch {
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: s.opts.Secret, Labels: map[string]string{"app.kubernetes.io/name": "rukpak-kapp"}},
			Type:       corev1.SecretTypeTLS,
		}
	case err != nil:
		return time.Time{}, fmt.Errorf("read secret %s/%s: %w", s.opts.Namespace, s.opts.Secret, err)
	default:
		secret = secret.DeepCopy()
	}
	plan, err := PlanCertificates(secret.Data, s.opts.Service, s.opts.Namespace, time.Now())
	if err != nil {
		return time.Time{}, err
	}
	if plan.Changed {
		secret.Data = plan.Data
		if secret.ResourceVersion == "" {
			err = writer.Create(ctx, secret, client.FieldOwner(fieldowner.Name))
		} else {
			err = writer.Update(ctx, secret, client.FieldOwner(fieldowner.Name))
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			// Another replica wrote first: its Secret arrives through the
			// watch and is planned again.
			return time.Now().Add(time.Second), nil
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("write secret %s/%s: %w", s.opts.Namespace, s.opts.Secret, err)
		}
	}
	pair, err := tls.X509KeyPair(plan.Serving.CertPEM, plan.Serving.KeyPEM)
	if err != nil {
		return time.Time{}, fmt.Errorf("load the serving certificate: %w", err)
	}
	s.serving.Store(&pair)
	var errs []error
	for _, t := range targets {
		if err := inject(ctx, c, writer, t, plan.Bundle); err != nil {
			errs = append(errs, err)
		}
	}
	return plan.NextCheck, errors.Join(errs...)
}

func (s *Server) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.serving.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("the webhook serving certificate is not loaded yet")
}
