#!/usr/bin/env bash
# Builds the local control plane and the Carvel tools from the pinned wrapper
# modules alongside this script, once. Binaries are cached outside the checkout
# (a fresh clone has an empty bin/) under a key made of the tool, a hash of
# its go.mod/go.sum and of the build recipe below, so bumping a version
# rebuilds and nothing else does. bin/ then only holds symlinks into the cache.
#
# Usage: build.sh [TOOL...] (no TOOL: all of them). Only the named tools are
# built, so `make run` never waits for a test-only tool.
#
# A fresh machine spends most of its first run here, so the build is shaped
# for two cores (docs/benchmarks.md has the numbers):
#   - the binaries of one module are built by one `go build` (the three
#     Kubernetes components share most of their packages; rukpak's binaries
#     and its e2e test binary share every dependency version), so no package
#     is compiled twice;
#   - modules with no package in common are built TOOLS_JOBS at a time
#     (default 2), longest first, so a link or a module download on one leaves
#     the other core compiling;
#   - no debug information is generated or linked (-dwarf=false, -s -w): the
#     tests read the tools' logs, never their symbols, and a panic's trace
#     still names every function;
#   - the compiler's settings are the Makefile's (CGO_ENABLED=0, -trimpath,
#     -dwarf=false), so the standard library, and the Kubernetes packages
#     the kubernetes module shares with rukpak-kapp at the same versions,
#     are compiled once for the tools and the product.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$root/bin"
cache="${RUKPAK_KAPP_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rukpak-kapp/tools}"
jobs="${TOOLS_JOBS:-2}"
mkdir -p "$bin" "$cache"

export GONOSUMDB="${GONOSUMDB:-carvel.dev}"
export GOFLAGS="-mod=mod"
export CGO_ENABLED=0

k8s_ldflags="-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"
# Part of every cache key: changing how tools are built rebuilds them.
recipe="trimpath gcflags=all=-dwarf=false ldflags=-s_-w cgo=0"

# One job per module, longest build first (measured on a fresh machine):
#   module-dir  kind  binary=package ...
# kind: ldflags ("-": none, "k8s": the Kubernetes version stamp, otherwise
# the flags with _ for spaces), or "test" for a package's test binary
# (go test -c). A job of two kinds is two go commands, one after the other.
jobs_table=(
  "kubernetes k8s kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler"
  "kapp-controller -X_main.Version=v0.53.1 kapp-controller=carvel.dev/kapp-controller/cmd/controller"
  "rukpak - rukpak-core=github.com/operator-framework/rukpak/cmd/core rukpak-helm=github.com/operator-framework/rukpak/cmd/helm"
  "rukpak-e2e test rukpak-e2e.test=github.com/operator-framework/rukpak/test/e2e"
  "rukpak-v0.16 - rukpak-v0.16-core=github.com/operator-framework/rukpak/cmd/core rukpak-v0.16-helm=github.com/operator-framework/rukpak/cmd/helm"
  "operator-controller - operator-controller=github.com/operator-framework/operator-controller/cmd/manager"
  "operator-controller-e2e test operator-controller-e2e.test=github.com/operator-framework/operator-controller/test/e2e"
  "catalogd - catalogd=github.com/operator-framework/catalogd/cmd/manager"
  "kwok - kwok=sigs.k8s.io/kwok/cmd/kwok"
  "helm - helm=helm.sh/helm/v3/cmd/helm"
  "kapp - kapp=carvel.dev/kapp/cmd/kapp"
  "kbld -X_carvel.dev/kbld/pkg/kbld/version.Version=v0.44.0_-X_carvel.dev/imgpkg/pkg/imgpkg/cmd.Version=v0.42.2 kbld=carvel.dev/kbld/cmd/kbld imgpkg=carvel.dev/imgpkg/cmd/imgpkg"
  "etcd - etcd=go.etcd.io/etcd/server/v3"
  "vendir - vendir=carvel.dev/vendir/cmd/vendir"
  "kustomize - kustomize=sigs.k8s.io/kustomize/kustomize/v5"
  "ytt - ytt=carvel.dev/ytt/cmd/ytt"
  "controller-gen - controller-gen=sigs.k8s.io/controller-tools/cmd/controller-gen"
)
# A job that shares its dependencies' versions with another runs in the
# same worker, right after it, and compiles only what is its own: rukpak's
# e2e suite after rukpak, operator-controller's after operator-controller;
# kwok after the Kubernetes components (its go.mod pins every module the
# two share at the kubernetes module's version); helm and kapp after
# rukpak (the three pin one version of each module they share: rukpak
# imports helm, and all three client-go 0.30). Built side by side, two
# go commands would compile the same packages twice.
declare -A after=([rukpak-e2e]=rukpak [operator-controller-e2e]=operator-controller [kwok]=kubernetes [helm]=rukpak [kapp]=rukpak)

only=" ${*:-} "
wanted() { [[ "$only" == "  " || "$only" == *" $1 "* ]]; }

# Kubernetes binaries a developer already has, laid out as setup-envtest lays
# them out (KUBEBUILDER_ASSETS: a directory with etcd and kube-apiserver; a
# kube-controller-manager or kube-scheduler put alongside them is taken too),
# are linked into bin/ instead of built. What the directory lacks is built;
# the three Kubernetes components build in one go command, so taking
# kube-apiserver alone saves its link, and etcd its whole build.
taken=" "
if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler; do
    if wanted "$name" && [[ -x "$KUBEBUILDER_ASSETS/$name" ]]; then
      ln -sfn "$(cd "$KUBEBUILDER_ASSETS" && pwd)/$name" "$bin/$name"
      taken+="$name "
      echo ">> $name from KUBEBUILDER_ASSETS: $("$bin/$name" --version 2>/dev/null | head -1)"
    fi
  done
fi
fromassets() { [[ "$taken" == *" $1 "* ]]; }

# keyof MODULE KIND: a job's own ldflags (a version stamp) are part of its key;
# "-", "k8s" and "test" add nothing (their flags are the recipe's).
keyof() {
  local flags=""
  case "$2" in -|k8s|test) ;; *) flags="ldflags=$2" ;; esac
  { cat "$here/$1/go.mod" "$here/$1/go.sum"; echo "$recipe"; [[ -z "$flags" ]] || echo "$flags"; } | sha256sum | cut -c1-12
}

# build_job MODULE KIND NAME=PKG...: as build_module, holding the module's
# lock: two build.sh side by side (make test builds the tools a lane needs
# late alongside the lanes, and the lane asks for them before its suite) build
# a module once, the second waiting for the first and finding it cached.
build_job() {
  local lock="$cache/.lock-$1"
  if ! missing "$@"; then
    # Cached: only its links into bin/, which need no lock.
    build_module "$@"
    return
  fi
  (
    if ! flock -n 9; then
      echo ">> waiting for $1, which another build.sh is building"
      flock 9
    fi
    build_module "$@"
  ) 9>"$lock"
}

# missing MODULE KIND NAME=PKG...: whether a binary of the job is wanted
# and not cached yet (a job with none takes no lock and waits for nobody).
missing() {
  local key pair name
  key=$(keyof "$1" "$2")
  shift 2
  for pair in "$@"; do
    name=${pair%%=*}
    if wanted "$name" && ! fromassets "$name" && [[ ! -x "$cache/$name-$key/$name" ]]; then
      return 0
    fi
  done
  return 1
}

# build_module MODULE KIND NAME=PKG...: builds the named binaries that are
# wanted and not cached yet, with one go command, and links them into bin/.
build_module() {
  local mod=$1 kind=$2
  shift 2
  local key names=() pkgs=() pair name pkg
  key=$(keyof "$mod" "$kind")
  for pair in "$@"; do
    name=${pair%%=*} pkg=${pair#*=}
    wanted "$name" && ! fromassets "$name" || continue
    if [[ ! -x "$cache/$name-$key/$name" ]]; then
      names+=("$name") pkgs+=("$pkg")
    fi
  done
  if [[ ${#names[@]} -gt 0 ]]; then
    local ldflags build=(go build) t0 tmp
    case "$kind" in
      -) ldflags="" ;;
      k8s) ldflags="$k8s_ldflags" ;;
      test) ldflags="" build=(go test -c) ;;
      *) ldflags="${kind//_/ }" ;;
    esac
    echo ">> building ${names[*]} (first run only; the Kubernetes components take 9-13 minutes on 2 cores)"
    t0=$(date +%s)
    tmp=$(mktemp -d "$cache/.build-$mod.XXXXXX")
    local out="$tmp/"
    # go test -c takes one package and a file name.
    [[ "$kind" == test ]] && out="$tmp/${names[0]}"
    (cd "$here/$mod" && "${build[@]}" -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w $ldflags" -o "$out" "${pkgs[@]}")
    local i base
    for i in "${!names[@]}"; do
      name=${names[$i]}
      base=$(basename "${pkgs[$i]}")
      [[ "$kind" == test ]] && base=$name
      # go build -o DIR/ names a binary after its package's last element
      # (cmd/core, a module root's v3), which is not always the tool's name.
      [[ "$base" =~ ^v[0-9]+$ ]] && base=$(basename "$(dirname "${pkgs[$i]}")")
      mkdir -p "$cache/$name-$key.tmp"
      mv "$tmp/$base" "$cache/$name-$key.tmp/$name"
      rm -rf "$cache/$name-$key" && mv "$cache/$name-$key.tmp" "$cache/$name-$key"
    done
    rm -rf "$tmp"
    echo ">> built ${names[*]} in $(($(date +%s) - t0))s"
  fi
  for pair in "$@"; do
    name=${pair%%=*}
    if wanted "$name" && ! fromassets "$name"; then ln -sfn "$cache/$name-$key/$name" "$bin/$name"; fi
  done
  return 0
}

start_all=$(date +%s)
# Each worker line: jobs separated by ';', run in order. A job that must
# follow another (after[]) is appended to that job's line.
lines=()
for entry in "${jobs_table[@]}"; do
  read -r mod _ <<<"$entry"
  if [[ -n "${after[$mod]:-}" ]]; then
    for i in "${!lines[@]}"; do
      [[ "${lines[$i]}" == "${after[$mod]} "* ]] && lines[$i]+=";$entry"
    done
  else
    lines+=("$entry")
  fi
done
export -f build_job build_module missing wanted keyof fromassets
export here bin cache recipe k8s_ldflags only taken
printf '%s\n' "${lines[@]}" | xargs -d '\n' -P "$jobs" -I{} bash -c '
  set -euo pipefail
  IFS=";" read -ra js <<<"$1"
  for j in "${js[@]}"; do read -ra w <<<"$j"; build_job "${w[@]}"; done
' _ {}

# moddir DIR MODULE: where the module cache holds MODULE as DIR's go.mod pins
# it (downloaded if the cache was emptied since the tool was built).
moddir() { (cd "$here/$1" && go mod download "$2" && go list -m -f '{{.Dir}}' "$2"); }

# kwok refuses to start without stage definitions; its module ships them.
if wanted kwok; then
  kwokdir=$(moddir kwok sigs.k8s.io/kwok)
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
if wanted kapp-controller; then
  kcdir=$(moddir kapp-controller carvel.dev/kapp-controller)
  cp "$kcdir/config/config/crds.yml" "$bin/kapp-controller-crds.yaml"
  chmod 0644 "$bin/kapp-controller-crds.yaml"
fi

echo ">> tools ready in $bin ($(($(date +%s) - start_all))s)"
