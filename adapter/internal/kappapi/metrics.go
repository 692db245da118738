package kappapi

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// served is 1 for each API the adapter opened, 0 while it waits for one.
var served = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "rukpak_kapp_api_served",
	Help: "1 for each API rukpak-kapp needs that is served and whose controllers run (kapp-controller's API, the OperatorCatalog API with kapp-controller's packaging API), 0 while rukpak-kapp waits for it; what needs it waits meanwhile, and the rest runs.",
}, []string{"api"})

func init() { metrics.Registry.MustRegister(served) }
