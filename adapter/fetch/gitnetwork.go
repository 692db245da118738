package fetch

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// gitTLS is what a fetch over http(s) takes from the BundleDeployment and
// kapp-controller-config: go-git adds a CA bundle to the system roots and
// takes one proxy per fetch.
type gitTLS struct {
	caBundle []byte
	proxy    transport.ProxyOptions
	insecure bool
}

// gitTLSFor reads opts for its repository. An ssh repository takes only the
// BundleDeployment's skip (of the host key check); kapp-controller's git
// reaches ssh servers without its proxies too.
func gitTLSFor(opts GitOptions) (gitTLS, error) {
	out := gitTLS{insecure: opts.InsecureSkipVerify}
	n := opts.Network
	if n == nil || !strings.HasPrefix(opts.Repository, "http") {
		return out, nil
	}
	if err := n.Err(); err != nil {
		return out, err
	}
	u, err := url.Parse(opts.Repository)
	if err != nil {
		return out, fmt.Errorf("%w: parse repository URL: %v", ErrInvalidContent, err)
	}
	out.caBundle = []byte(n.CACerts())
	out.insecure = out.insecure || n.SkipsVerify(u.Host)
	proxy, err := n.ProxyFor(u)
	if err != nil {
		return out, fmt.Errorf("choose a proxy for %s: %w", u.Host, err)
	}
	if proxy != nil {
		out.proxy = transport.ProxyOptions{URL: proxy.String()}
	}
	return out, nil
}

// endpoint sets what t says on ep.
func (t gitTLS) endpoint(ep *transport.Endpoint) {
	ep.CaBundle, ep.Proxy, ep.InsecureSkipTLS = t.caBundle, t.proxy, t.insecure
}
