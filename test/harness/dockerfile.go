package harness

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// PushDockerContext pushes the image that dir's Dockerfile builds to
// repo:tag on this registry, without a container runtime: the Dockerfile
// may only say FROM scratch, COPY (or ADD) of files of the context and
// LABEL, which is all rukpak's and operator-controller's test bundles and
// catalogs say. Each COPY puts a file, or a directory's content, at its
// destination in one layer; .dockerignore's paths are left out, as docker
// leaves them out of the build context; labels go into the image's config.
func (r *Registry) PushDockerContext(dir, repoTag string) (string, v1.Hash, error) {
	return r.PushDockerfile(dir, "Dockerfile", repoTag)
}

// PushDockerfile is PushDockerContext with the Dockerfile named file (in
// dir, the context), as `docker build -f file dir` builds it.
func (r *Registry) PushDockerfile(dir, file, repoTag string) (string, v1.Hash, error) {
	df, err := readDockerfile(filepath.Join(dir, file))
	if err != nil {
		return "", v1.Hash{}, err
	}
	data, err := contextLayer(dir, df)
	if err != nil {
		return "", v1.Hash{}, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return "", v1.Hash{}, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return "", v1.Hash{}, fmt.Errorf("build image of %s: %w", dir, err)
	}
	if len(df.labels) > 0 {
		if img, err = mutate.Config(img, v1.Config{Labels: df.labels}); err != nil {
			return "", v1.Hash{}, fmt.Errorf("label image of %s: %w", dir, err)
		}
	}
	return r.PushImage(img, repoTag)
}

// DockerContextLayer is the gzipped layer that dir's Dockerfile builds
// (see PushDockerContext): sorted entries, no times, so one context always
// gives one digest.
func DockerContextLayer(dir string) ([]byte, error) {
	df, err := readDockerfile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return nil, err
	}
	return contextLayer(dir, df)
}

func contextLayer(dir string, df dockerfile) ([]byte, error) {
	ignored, err := dockerignore(filepath.Join(dir, ".dockerignore"))
	if err != nil {
		return nil, err
	}
	entries := map[string]string{} // path in the image -> file in dir ("" for a directory)
	for _, c := range df.copies {
		for _, src := range c.sources {
			if err := addCopy(entries, dir, src, c.dest, len(c.sources) > 1, ignored); err != nil {
				return nil, err
			}
		}
	}
	return tarEntries(entries)
}

type dockerCopy struct {
	sources []string
	dest    string
}

// dockerfile is what a FROM scratch Dockerfile says.
type dockerfile struct {
	copies []dockerCopy
	labels map[string]string
}

// readDockerfile reads the COPY, ADD (of the context's files: ADD's URLs
// and archive extraction are refused) and LABEL instructions of a FROM
// scratch Dockerfile.
func readDockerfile(file string) (dockerfile, error) {
	df := dockerfile{labels: map[string]string{}}
	f, err := os.Open(file)
	if err != nil {
		return df, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			if len(fields) != 2 || fields[1] != "scratch" {
				return df, fmt.Errorf("%s: only FROM scratch is supported, not %q", file, sc.Text())
			}
		case "COPY", "ADD":
			if len(fields) < 3 || strings.HasPrefix(fields[1], "--") {
				return df, fmt.Errorf("%s: only %s SOURCE... DEST is supported, not %q", file, fields[0], sc.Text())
			}
			sources := fields[1 : len(fields)-1]
			for _, src := range sources {
				if strings.Contains(src, "://") || strings.HasSuffix(src, ".tar") || strings.HasSuffix(src, ".tgz") || strings.HasSuffix(src, ".tar.gz") {
					return df, fmt.Errorf("%s: %s of a URL or an archive is not supported, not %q", file, fields[0], sc.Text())
				}
			}
			df.copies = append(df.copies, dockerCopy{sources: sources, dest: fields[len(fields)-1]})
		case "LABEL":
			for _, kv := range fields[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return df, fmt.Errorf("%s: only LABEL KEY=VALUE... is supported, not %q", file, sc.Text())
				}
				df.labels[k] = strings.Trim(v, `"`)
			}
		default:
			return df, fmt.Errorf("%s: instruction %q is not supported", file, fields[0])
		}
	}
	return df, sc.Err()
}

// dockerignore reads the patterns of a .dockerignore (none without one).
func dockerignore(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var patterns []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") || strings.Contains(line, "**") {
			return nil, fmt.Errorf("%s: pattern %q is not supported", file, line)
		}
		patterns = append(patterns, path.Clean(strings.TrimPrefix(line, "/")))
	}
	return patterns, nil
}

func isIgnored(rel string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, rel); ok || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// addCopy adds what COPY src dest puts in the image: a file at dest (or
// dest/name when dest is a directory), a directory's content under dest.
func addCopy(entries map[string]string, dir, src, dest string, many bool, ignored []string) error {
	src = path.Clean(src)
	root := filepath.Join(dir, filepath.FromSlash(src))
	info, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("COPY or ADD %s: %w", src, err)
	}
	intoDir := strings.HasSuffix(dest, "/") || many
	dest = strings.TrimPrefix(path.Clean("/"+dest), "/")
	if !info.IsDir() {
		if intoDir {
			dest = path.Join(dest, path.Base(src))
		}
		if !isIgnored(src, ignored) {
			addParents(entries, dest)
			entries[dest] = root
		}
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if isIgnored(filepath.ToSlash(rel), ignored) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		within, _ := filepath.Rel(root, p)
		target := path.Join(dest, filepath.ToSlash(within))
		if target == "." || target == "" {
			return nil
		}
		addParents(entries, target)
		if d.IsDir() {
			entries[target] = ""
		} else {
			entries[target] = p
		}
		return nil
	})
}

func addParents(entries map[string]string, target string) {
	for d := path.Dir(target); d != "." && d != "/"; d = path.Dir(d) {
		if _, ok := entries[d]; !ok {
			entries[d] = ""
		}
	}
}

func tarEntries(entries map[string]string) ([]byte, error) {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		file := entries[n]
		if file == "" {
			if err := tw.WriteHeader(&tar.Header{Name: n + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
				return nil, err
			}
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(data))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
