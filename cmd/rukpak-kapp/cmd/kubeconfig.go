package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfig holds kubectl's flags for choosing the cluster: --kubeconfig
// (else $KUBECONFIG, else ~/.kube/config, else the in-cluster config) and
// --context, bound from client-go's clientcmd, which kubectl's flags
// (k8s.io/cli-runtime's ConfigFlags) are made of. cli-runtime itself would
// add kustomize and printers to the binary, 44 MB for two flags.
type kubeconfig struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
}

func kubeconfigFlags(cmd *cobra.Command) *kubeconfig {
	k := &kubeconfig{rules: clientcmd.NewDefaultClientConfigLoadingRules(), overrides: &clientcmd.ConfigOverrides{}}
	cmd.Flags().StringVar(&k.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "path to the kubeconfig file to use (default: $KUBECONFIG, else ~/.kube/config, else the in-cluster config)")
	cmd.Flags().StringVar(&k.overrides.CurrentContext, clientcmd.FlagContext, "", "the name of the kubeconfig context to use")
	return k
}

// Namespace is the namespace of the kubeconfig's context ("default"
// without one), as kubectl takes it when -n is not given.
func (k *kubeconfig) Namespace() (string, error) {
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, k.overrides).Namespace()
	return ns, err
}

// ToRESTConfig is the client configuration the flags choose.
func (k *kubeconfig) ToRESTConfig() (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, k.overrides).ClientConfig()
}
