package translate

import (
	"hash/fnv"
	"slices"
)

// Placement is the namespace a new App for the BundleDeployment bdName goes
// to: SystemNamespace, or with AppNamespaces one of them, picked by a hash
// of the name so the choice needs no state and spreads evenly. An App that
// exists stays where it is (the reconciler looks first), so namespaces can
// be added to AppNamespaces later without moving any App.
func Placement(cfg Config, bdName string) string {
	if len(cfg.AppNamespaces) == 0 {
		return cfg.SystemNamespace
	}
	return cfg.AppNamespaces[nameHash(bdName)%uint32(len(cfg.AppNamespaces))]
}

// nameHash spreads Apps by name, the same in every adapter and release:
// where an App goes and when it re-syncs need no state.
func nameHash(name string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return h.Sum32()
}

func (c Config) appNamespace() string {
	if c.AppNamespace != "" {
		return c.AppNamespace
	}
	return c.SystemNamespace
}

// Namespaces are the namespaces an App may be in: the system namespace and
// the app namespaces, each once.
func Namespaces(cfg Config) []string {
	out := []string{cfg.SystemNamespace}
	for _, ns := range cfg.AppNamespaces {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}
