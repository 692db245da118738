// Package kappconfig follows kapp-controller's own configuration,
// kapp-controller-config in kapp-controller's namespace (the Secret, else
// the ConfigMap, as kapp-controller reads it), and hands what it says about
// the network (CAs, proxies, hosts not verified) to every fetch the adapter
// makes itself, through a fetch.NetworkHolder: a source kapp-controller
// reaches through its config, the adapter reaches too, and a change is
// followed without a restart. When it changes, the leader queues the
// BundleDeployments and Bundles whose unpack failed again at once (package adapter's
// onChange), instead of at the end of their backoff.
//
// It runs alongside the reconciler on every replica (the contentURLs every
// replica serves fetch too), wired in adapter.NewManager; it reads
// nothing but those two objects, and owns no memory but the holder.
package kappconfig
