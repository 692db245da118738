package translate

import "hash/fnv"

// Placement is the namespace a new App for the BundleDeployment bdName goes
// to: SystemNamespace, or with AppNamespaces one of them, picked by a hash
// of the name so the choice needs no state and spreads evenly. An App that
// exists stays where it is (the reconciler looks first), so namespaces can
// be added to AppNamespaces later without moving any App.
func Placement(cfg Config, bdName string) string {
	if len(cfg.AppNamespaces) == 0 {
		return cfg.SystemNamespace
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(bdName))
	return cfg.AppNamespaces[h.Sum32()%uint32(len(cfg.AppNamespaces))]
}

func (c Config) appNamespace() string {
	if c.AppNamespace != "" {
		return c.AppNamespace
	}
	return c.SystemNamespace
}
