package adapter

import "github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/kappconfig"

// KappControllerConfig is kapp-controller-config as kapp-controller reads
// it (kappconfig.Config).
type KappControllerConfig = kappconfig.Config

// ReadKappControllerConfig reads it as the adapter's watch does
// (kappconfig.Read): the Secret, else the ConfigMap.
var ReadKappControllerConfig = kappconfig.Read
