module rukpak-kapp/tools/rukpak-e2e

go 1.26

require github.com/operator-framework/rukpak v0.24.0

require (
	golang.org/x/net v0.27.0 // indirect
	helm.sh/helm/v3 v3.15.4 // indirect
	k8s.io/api v0.30.3 // indirect
	k8s.io/apiextensions-apiserver v0.30.3 // indirect
	k8s.io/apimachinery v0.30.3 // indirect
	k8s.io/cli-runtime v0.30.3 // indirect
	k8s.io/client-go v0.30.3 // indirect
)
