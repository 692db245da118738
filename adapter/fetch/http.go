package fetch

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
)

// HTTPOptions say how to download an archive.
type HTTPOptions struct {
	Username, Password string
	// InsecureSkipVerify skips certificate verification, for this fetch only.
	InsecureSkipVerify bool
	// Network is kapp-controller-config's CAs and proxies; nil: the
	// environment's.
	Network *Network
}

// FetchHTTP downloads a gzipped tar archive and unpacks it within limits.
func FetchHTTP(ctx context.Context, url string, opts HTTPOptions, limits Limits) (Files, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: build request for %q: %v", ErrInvalidContent, url, err)
	}
	if opts.Username != "" || opts.Password != "" {
		req.SetBasicAuth(opts.Username, opts.Password)
	}
	t, err := opts.Network.transport(req.URL.Host, "", opts.InsecureSkipVerify, false)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	resp, err := (&http.Client{Transport: t}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// rukpak's wording, which users grep for.
		return nil, fmt.Errorf("get %s: unexpected status %q", url, resp.Status)
	}
	// The compressed stream is capped too, so a slow endless body ends.
	body := io.LimitReader(resp.Body, limits.MaxTotalBytes+1)
	gz, err := gzip.NewReader(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a gzipped tar archive: gzip: %v", ErrInvalidContent, url, err)
	}
	defer gz.Close()
	files, err := ExtractTar(gz, limits)
	if err != nil {
		return nil, fmt.Errorf("unpack %s: %w", url, err)
	}
	return files, nil
}
