#!/usr/bin/env bash
# Times a newcomer's first run the way a fresh machine sees it, on this one:
# a clone of the committed HEAD into an empty directory, with empty Go caches
# (build and module) and an empty tool cache of its own, so nothing this
# machine already built or downloaded is reused. docs/benchmarks.md records
# what it printed.
#
#   bash test/bench/freshrun.sh test [DIR]   # CI=true bash .ci/run
#   bash test/bench/freshrun.sh run  [DIR]   # make run, until both examples are Installed
#
# DIR (default: a new temporary directory) keeps the clone, the caches and
# the log (freshrun.log: every line of output with the seconds since the
# start) for a look afterwards; the summary at the end is read from the log.
# The Go caches and the tool cache are the run's own, and so is HOME (a
# directory of DIR), so nothing of this machine's user is read either.
# Run it with nothing else on the machine: the numbers are the wall clock.
set -euo pipefail

what=${1:-test}
root=$(git rev-parse --show-toplevel)
work=${2:-$(mktemp -d -t freshrun.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [[ -e "$work/clone" ]]; then
  echo "freshrun: $work/clone exists; give an empty directory" >&2
  exit 2
fi
git clone -q --no-hardlinks "$root" "$work/clone"
mkdir -p "$work/go-build" "$work/mod" "$work/tools" "$work/home"
export GOCACHE="$work/go-build" GOMODCACHE="$work/mod" RUKPAK_KAPP_TOOLS_CACHE="$work/tools" HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache"
log="$work/freshrun.log"
echo "freshrun: $what in $work (commit $(git -C "$work/clone" rev-parse --short HEAD))"

case "$what" in
  test) cmd=(env CI=true bash .ci/run) ;;
  run) cmd=(make run) ;;
  *)
    echo "usage: freshrun.sh test|run [DIR]" >&2
    exit 2
    ;;
esac

start=$(date +%s)
# Each line with the seconds since the start. make run keeps running after
# the examples are installed: it is stopped at the line that says so.
set +e
(
  cd "$work/clone"
  exec setsid "${cmd[@]}" </dev/null 2>&1
) | while IFS= read -r line; do
  printf '[%5ds] %s\n' $(($(date +%s) - start)) "$line"
  if [[ "$what" == run && "$line" == "The BundleDeployments are installed."* ]]; then
    pkill -TERM -f "$work/clone/bin/rukpak-kapp-dev" || true
  fi
done >"$log"
rc=${PIPESTATUS[0]}
set -e
total=$(($(date +%s) - start))

# The summary: for test, .ci/run's closing table (every phase, lane and
# suite alongside its budget); for run, when each phase was reached.
at() { grep -m1 -F -- "$1" "$log" | sed -E 's/^\[ *([0-9]+)s\].*/\1/'; }
echo "freshrun: $what exited $rc after ${total}s at commit $(git -C "$work/clone" rev-parse --short HEAD); log $log"
if [[ "$what" == test ]]; then
  sed -n '/>> where the time went/,$p' "$log" | sed -E 's/^\[ *[0-9]+s\] ?//'
else
  printf '  %-34s %6ss\n' "tools ready" "$(at '>> tools ready')"
  printf '  %-34s %6ss\n' "local control plane up" "$(at 'local control plane up')"
  printf '  %-34s %6ss\n' "both examples Installed" "$(at 'The BundleDeployments are installed.')"
fi
grep -E '>> built |Ran [0-9]+ of [0-9]+ Specs' "$log" | sed 's/^/  /' || true
exit "$rc"
