package translate

// registryDeployOptions let kapp apply a bundle that converts to no objects
// (a CSV without deployments): for OLM that is an installed operator.
var registryDeployOptions = []string{"--dangerous-allow-empty-list-of-resources=true"}
