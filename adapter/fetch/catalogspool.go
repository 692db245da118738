package fetch

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/joelanford/ignore"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// indexIgnore is the file of gitignore patterns a catalog directory may
// hold, naming files that are not catalog, as declcfg.LoadFS honours it.
const indexIgnore = ".indexignore"

// MaxCatalogMetaBytes caps one object of a catalog (one bundle, channel or
// package as opm writes it): the most a catalog read holds in memory at
// once, with the package being published.
const MaxCatalogMetaBytes = 32 << 20

// CatalogSpool is the file-based catalog of an image, read once as the
// image is pulled and kept on disk, indexed by package, so that a catalog
// of any size is published a package at a time: memory grows with the
// largest package, never with the catalog or the image.
type CatalogSpool struct {
	// Pinned is the image by digest.
	Pinned string
	file   *os.File
	// packages: where each package's objects are in file, in the order
	// they were read.
	packages map[string][]span
	// budget is what it takes its bytes from (nil: unbounded); held, what
	// it took.
	budget *SpoolBudget
	held   int64
}

type span struct {
	off int64
	n   int
	// file is the catalog file the object came from (for .indexignore).
	file string
}

// SpoolCatalogImage pulls ref and reads the file-based catalog under the
// directory its label names (/configs without one) into a spool under dir
// ("": the OS's temporary directory), within limits: MaxFetchBytes caps
// the image's layers as pushed, MaxFileBytes one catalog file,
// MaxTotalBytes and MaxFiles the catalog. The layers are read in order
// with their whiteouts applied (mutate.Extract: a later layer's file wins),
// streamed, never held: only catalog files are read, one object at a time.
// The spool's bytes are taken from budget (nil: unbounded), shared by every
// spool of the process. The caller closes the spool.
func SpoolCatalogImage(ctx context.Context, ref string, opts ImageOptions, limits Limits, dir string, budget *SpoolBudget) (*CatalogSpool, error) {
	parsed, img, err := remoteImage(ctx, ref, opts)
	if err != nil {
		return nil, fmt.Errorf("pull the catalog image %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("read the digest of %s: %w", ref, err)
	}
	pinned := parsed.Context().Name() + "@" + digest.String()
	config, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read the configuration of %s: %w", pinned, err)
	}
	catalogDir := "configs"
	if l := config.Config.Labels[CatalogConfigsLabel]; l != "" {
		catalogDir = strings.Trim(path.Clean("/"+l), "/")
	}
	manifest, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read the manifest of %s: %w", pinned, err)
	}
	// The registry's bytes are verified against the manifest's sizes and
	// digests as they are read, so the manifest's sum is what is fetched.
	var fetched int64
	for _, l := range manifest.Layers {
		fetched += l.Size
	}
	if fetched > limits.MaxFetchBytes {
		return nil, fmt.Errorf("%w: the layers of %s are %d bytes, over the limit of %d", ErrInvalidContent, pinned, fetched, limits.MaxFetchBytes)
	}
	s, err := newCatalogSpool(dir, pinned)
	if err != nil {
		return nil, err
	}
	s.budget = budget
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := s.readTar(ctx, rc, catalogDir, limits); err != nil {
		s.Close()
		return nil, fmt.Errorf("read the catalog of %s: %w", pinned, err)
	}
	if len(s.packages) == 0 {
		s.Close()
		return nil, fmt.Errorf("%w: the image %s holds no catalog under /%s (label %s)", ErrInvalidContent, pinned, catalogDir, CatalogConfigsLabel)
	}
	return s, nil
}

// spoolPattern names the spools in their directory.
const spoolPattern = "catalog-*.spool"

// RemoveCatalogSpools removes the spools a process before this one left in
// dir (it stopped without closing them: the adapter's directory is an
// emptyDir, which outlives a container's restart).
func RemoveCatalogSpools(dir string) error {
	left, err := filepath.Glob(filepath.Join(dir, spoolPattern))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range left {
		errs = append(errs, os.Remove(f))
	}
	return errors.Join(errs...)
}

func newCatalogSpool(dir, pinned string) (*CatalogSpool, error) {
	f, err := os.CreateTemp(dir, spoolPattern)
	if err != nil {
		return nil, fmt.Errorf("create a spool for the catalog %s: %w", pinned, err)
	}
	return &CatalogSpool{Pinned: pinned, file: f, packages: map[string][]span{}}, nil
}

// readTar reads the catalog files under catalogDir of a flattened image.
func (s *CatalogSpool) readTar(ctx context.Context, r io.Reader, catalogDir string, limits Limits) error {
	tr := tar.NewReader(r)
	ignores := fstest.MapFS{}
	// A file that is no catalog fails the read unless .indexignore names
	// it, which may come later in the stream.
	failed := map[string]error{}
	var total int64
	files := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read the image's layers: %w", err)
		}
		// Only regular files are read: a link is no catalog file (and
		// nothing here is ever written by its path).
		if h.Typeflag != tar.TypeReg {
			continue
		}
		clean := path.Clean(strings.TrimLeft(h.Name, "/"))
		rel, ok := strings.CutPrefix(clean, catalogDir+"/")
		if !ok || rel == "" {
			continue
		}
		if err := limits.Admit("/"+clean, h.Size, &total, files); err != nil {
			return err
		}
		files++
		if path.Base(rel) == indexIgnore {
			data, err := io.ReadAll(tr)
			if err != nil {
				return fmt.Errorf("read /%s: %w", clean, err)
			}
			ignores[rel] = &fstest.MapFile{Data: data}
			continue
		}
		if err := s.readFile(tr, rel, "/"+clean); err != nil {
			var full *spoolFull
			if !errors.Is(err, ErrInvalidContent) || errors.As(err, &full) {
				return err
			}
			failed[rel] = err
		}
	}
	return s.ignore(ignores, failed)
}

// readFile spools the objects of one catalog file (YAML or JSON, one
// object at a time).
func (s *CatalogSpool) readFile(r io.Reader, rel, shown string) error {
	counted := &metaBound{r: r, max: MaxCatalogMetaBytes}
	err := declcfg.WalkMetasReader(counted, func(m *declcfg.Meta, err error) error {
		if err != nil {
			return err
		}
		counted.mark()
		pkg := m.Package
		if m.Schema == declcfg.SchemaPackage {
			pkg = m.Name
		}
		if pkg == "" {
			// Not part of a package (a schema of someone else's): not
			// published, as Publish reads none.
			return nil
		}
		off, err := s.file.Seek(0, io.SeekEnd)
		if err != nil {
			return err
		}
		if err := s.budget.take(int64(len(m.Blob)), s.held); err != nil {
			return err
		}
		s.held += int64(len(m.Blob))
		if _, err := s.file.Write(m.Blob); err != nil {
			return fmt.Errorf("spool the catalog: %w", err)
		}
		s.packages[pkg] = append(s.packages[pkg], span{off: off, n: len(m.Blob), file: rel})
		return nil
	})
	if err != nil {
		var full *spoolFull
		if errors.As(err, &full) {
			// The disk's bound, not this file: the whole read stops.
			return full
		}
		if errors.Is(err, errMetaTooLarge) {
			return fmt.Errorf("%w: %s holds an object over %d bytes", ErrInvalidContent, shown, MaxCatalogMetaBytes)
		}
		return fmt.Errorf("%w: read %s: %v", ErrInvalidContent, shown, err)
	}
	return nil
}

// ignore drops what the catalog's .indexignore files name, as
// declcfg.LoadFS does.
// failed are the files that could not be read: the first one not ignored
// fails the read.
func (s *CatalogSpool) ignore(ignores fstest.MapFS, failed map[string]error) error {
	matcher, err := ignore.NewMatcher(ignores, indexIgnore)
	if err != nil {
		return fmt.Errorf("%w: read %s: %v", ErrInvalidContent, indexIgnore, err)
	}
	files := slices.Sorted(maps.Keys(failed))
	for _, f := range files {
		if !matcher.Match(f, false) {
			return failed[f]
		}
	}
	for pkg, spans := range s.packages {
		spans = slices.DeleteFunc(spans, func(sp span) bool { return matcher.Match(sp.file, false) })
		if len(spans) == 0 {
			delete(s.packages, pkg)
			continue
		}
		s.packages[pkg] = spans
	}
	return nil
}

var errMetaTooLarge = errors.New("catalog object too large")

// metaBound fails a read once more than max bytes were read since the
// last object ended (mark): the decoder would otherwise hold an object of
// any size. The decoder reads ahead, so the bound is approximate.
type metaBound struct {
	r          io.Reader
	max        int64
	read, from int64
}

func (b *metaBound) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	if b.read-b.from > b.max {
		return n, errMetaTooLarge
	}
	return n, err
}

func (b *metaBound) mark() { b.from = b.read }

// Packages are the catalog's packages, by name.
func (s *CatalogSpool) Packages() []string {
	out := make([]string, 0, len(s.packages))
	for p := range s.packages {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Package reads one package back: its olm.package, channels, bundles and
// deprecations.
func (s *CatalogSpool) Package(pkg string) (*declcfg.DeclarativeConfig, error) {
	spans := s.packages[pkg]
	metas := make([]*declcfg.Meta, 0, len(spans))
	for _, sp := range spans {
		blob := make([]byte, sp.n)
		if _, err := s.file.ReadAt(blob, sp.off); err != nil {
			return nil, fmt.Errorf("read package %s from the spool: %w", pkg, err)
		}
		m := &declcfg.Meta{}
		if err := json.Unmarshal(blob, m); err != nil {
			return nil, fmt.Errorf("read package %s from the spool: %w", pkg, err)
		}
		metas = append(metas, m)
	}
	cfg, err := declcfg.LoadSlice(metas)
	if err != nil {
		return nil, fmt.Errorf("%w: package %s of %s: %v", ErrInvalidContent, pkg, s.Pinned, err)
	}
	return cfg, nil
}

// Close removes the spool.
func (s *CatalogSpool) Close() error {
	if s == nil || s.file == nil {
		return nil
	}
	err := s.file.Close()
	if rerr := os.Remove(s.file.Name()); err == nil && !errors.Is(rerr, os.ErrNotExist) {
		err = rerr
	}
	s.file = nil
	s.budget.give(s.held)
	s.held = 0
	return err
}
