package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// bundleYAML is a small plain bundle: a ConfigMap, a ServiceAccount and a
// one-replica Deployment, distinct per index. version 2 adds a key, which is
// how the one-change measurement sees the new bundle installed.
func bundleYAML(i, version int) string {
	extra := ""
	if version > 1 {
		extra = "\n  changed: \"yes\""
	}
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s
data:
  index: "%[3]d"%[2]s
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: %[1]s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      serviceAccountName: %[1]s
      containers:
      - name: main
        image: registry.invalid/bench:v1
`, fmt.Sprintf("bench-%04d", i), extra, i)
}

// pushBundles pushes n version-1 bundles, singleApplies more (timed one at a
// time at rest) and a version 2 of bundle 0, and returns their references.
func pushBundles(reg *harness.Registry, dir string, n int) (v1, single []string, v2 string, err error) {
	push := func(i, version int) (string, error) {
		d := filepath.Join(dir, fmt.Sprintf("b%04d-v%d", i, version), "manifests")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(d, "objects.yaml"), []byte(bundleYAML(i, version)), 0o644); err != nil {
			return "", err
		}
		ref, _, err := reg.PushDir(filepath.Dir(d), fmt.Sprintf("bench/b%04d:v%d", i, version))
		if err != nil {
			return "", fmt.Errorf("push bundle %d: %w", i, err)
		}
		return ref, nil
	}
	for i := range n + singleApplies {
		ref, err := push(i, 1)
		if err != nil {
			return nil, nil, "", err
		}
		if i < n {
			v1 = append(v1, ref)
		} else {
			single = append(single, ref)
		}
	}
	v2, err = push(0, 2)
	return v1, single, v2, err
}
