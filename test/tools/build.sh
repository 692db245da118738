#!/usr/bin/env bash
# Builds the local control plane and the Carvel tools from the pinned wrapper
# modules beside this script, once. Binaries are cached outside the checkout
# (a fresh clone has an empty bin/) under a key made of the tool and a hash of
# its go.mod/go.sum, so bumping a version rebuilds and nothing else does.
# bin/ then only holds symlinks into the cache.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$root/bin"
cache="${RUKPAK_KAPP_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rukpak-kapp/tools}"
mkdir -p "$bin" "$cache"

export GONOSUMDB="${GONOSUMDB:-carvel.dev}"
export GOFLAGS="-mod=mod"
export CGO_ENABLED=0

k8s_ldflags="-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"

# module-dir  binary  package  ldflags ("test": the package's test binary, go test -c)
tools=(
  "controller-gen controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen -"
  "kustomize kustomize sigs.k8s.io/kustomize/kustomize/v5 -"
  "etcd etcd go.etcd.io/etcd/server/v3 -"
  "kapp-controller kapp-controller carvel.dev/kapp-controller/cmd/controller -X_main.Version=v0.53.1"
  "vendir vendir carvel.dev/vendir/cmd/vendir -"
  "ytt ytt carvel.dev/ytt/cmd/ytt -"
  "kbld kbld carvel.dev/kbld/cmd/kbld -"
  "helm helm helm.sh/helm/v3/cmd/helm -"
  "kapp kapp carvel.dev/kapp/cmd/kapp -"
  "kwok kwok sigs.k8s.io/kwok/cmd/kwok -"
  "rukpak rukpak-core github.com/operator-framework/rukpak/cmd/core -"
  "rukpak rukpak-helm github.com/operator-framework/rukpak/cmd/helm -"
  "rukpak-v0.16 rukpak-v0.16-core github.com/operator-framework/rukpak/cmd/core -"
  "rukpak-v0.16 rukpak-v0.16-helm github.com/operator-framework/rukpak/cmd/helm -"
  "rukpak-e2e rukpak-e2e.test github.com/operator-framework/rukpak/test/e2e test"
  "kubernetes kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver k8s"
  "kubernetes kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager k8s"
  "kubernetes kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler k8s"
)

only=" ${*:-} "
start_all=$(date +%s)
for entry in "${tools[@]}"; do
  read -r mod name pkg flags <<<"$entry"
  if [[ "$only" != "  " && "$only" != *" $name "* ]]; then continue; fi
  key=$(cat "$here/$mod/go.mod" "$here/$mod/go.sum" | sha256sum | cut -c1-12)
  dir="$cache/$name-$key"
  if [[ ! -x "$dir/$name" ]]; then
    build=(go build)
    case "$flags" in
      -) ldflags="" ;;
      k8s) ldflags="$k8s_ldflags" ;;
      test) ldflags="" build=(go test -c) ;;
      *) ldflags="${flags//_/ }" ;;
    esac
    echo ">> building $name (first run only; kube-apiserver takes 10-15 min on 2 cores)"
    t0=$(date +%s)
    mkdir -p "$dir.tmp"
    (cd "$here/$mod" && "${build[@]}" -ldflags "$ldflags" -o "$dir.tmp/$name" "$pkg")
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
    echo ">> built $name in $(( $(date +%s) - t0 ))s"
  fi
  ln -sfn "$dir/$name" "$bin/$name"
done

# kwok refuses to start without stage definitions; its module ships them.
if [[ "$only" == "  " || "$only" == *" kwok "* ]]; then
  kwokdir=$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  stages="$bin/kwok-stages.yaml"
  : >"$stages.tmp"
  for f in "$kwokdir"/kustomize/stage/node/fast/*.yaml "$kwokdir"/kustomize/stage/node/heartbeat/*.yaml "$kwokdir"/kustomize/stage/pod/fast/*.yaml "$here"/kwok/stages/*.yaml; do
    case "$(basename "$f")" in kustomization.yaml) continue ;; esac
    printf -- '---\n' >>"$stages.tmp"
    cat "$f" >>"$stages.tmp"
  done
  mv "$stages.tmp" "$stages"
fi

# kapp-controller's CRDs ship in its module.
if [[ "$only" == "  " || "$only" == *" kapp-controller "* ]]; then
  kcdir=$(cd "$here/kapp-controller" && go list -m -f '{{.Dir}}' carvel.dev/kapp-controller)
  cp "$kcdir/config/config/crds.yml" "$bin/kapp-controller-crds.yaml"
  chmod 0644 "$bin/kapp-controller-crds.yaml"
fi

echo ">> tools ready in $bin ($(( $(date +%s) - start_all ))s)"
