#!/usr/bin/env bash
# Runs the README's two quick-start commands (make demo, make check) on a fresh minimal
# Debian 12 system, so that nothing the project needs can hide on a developer's machine.
#
#   sudo scripts/fresh-machine-check.sh [REV]      (REV: commit to test, default HEAD)
#
# A minbase bookworm is bootstrapped into a scratch directory from this machine's own
# apt source, only the base packages the README assumes are added (build-essential cmake
# git clang python3), /proc /sys /dev are bind-mounted (tracing needs tracefs), the
# repository is cloned inside, and each command's result and time are printed. Everything
# is unmounted and removed at exit, whatever happened. Slow (tens of minutes): not part
# of make check.
set -euo pipefail

REPO=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
REV=${1:-HEAD}
REV=$(git -C "$REPO" rev-parse --verify "$REV^{commit}")
BASE_PACKAGES="build-essential cmake git clang python3"
SUITE=bookworm

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-machine-check: needs root (debootstrap, chroot, tracing)" >&2
  exit 1
fi

# The first Debian archive this machine's apt is configured with (deb822 or one-line
# format), so the scratch system installs exactly what a user of this machine would.
apt_mirror() {
  local m=""
  if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
    m=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources)
  fi
  if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
    m=$(awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' \
      /etc/apt/sources.list)
  fi
  echo "${m:-http://deb.debian.org/debian}"
}

if ! command -v debootstrap >/dev/null; then
  echo "== installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
fi

SCRATCH=$(mktemp -d /var/tmp/cstool-fresh.XXXXXX)
ROOT=$SCRATCH/root

# Unmount everything below the scratch root (deepest first) before removing it, so a
# bind mount can never lead rm into the host's /proc, /sys or /dev.
cleanup() {
  local rc=$?
  set +e
  # Processes left inside (a test's child, a daemon a package started) hold mounts busy.
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 {print $2}' /proc/self/mounts |
    sort -r | while read -r m; do umount -l "$m"; done
  if awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 {f = 1} END {exit !f}' /proc/self/mounts; then
    echo "fresh-machine-check: mounts left under $ROOT; not removing $SCRATCH" >&2
  else
    rm -rf "$SCRATCH"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

MIRROR=$(apt_mirror)
echo "== debootstrap --variant=minbase $SUITE from $MIRROR into $ROOT"
start=$SECONDS
debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$SCRATCH/debootstrap.log" 2>&1 ||
  { tail -20 "$SCRATCH/debootstrap.log"; exit 1; }
echo "   done in $((SECONDS - start)) s"

# The same apt sources as this machine (security and updates included), and its resolver.
rm -f "$ROOT/etc/apt/sources.list"
cp -a /etc/apt/sources.list "$ROOT/etc/apt/" 2>/dev/null || true
mkdir -p "$ROOT/etc/apt/sources.list.d"
cp -a /etc/apt/sources.list.d/*.sources "$ROOT/etc/apt/sources.list.d/" 2>/dev/null || true
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"

mount --rbind /proc "$ROOT/proc" && mount --make-rslave "$ROOT/proc"
mount --rbind /sys "$ROOT/sys" && mount --make-rslave "$ROOT/sys"
mount --rbind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev"
mkdir -p "$ROOT/src"
mount --bind "$REPO" "$ROOT/src" && mount -o remount,bind,ro "$ROOT/src"

in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 TERM=dumb "$@"; }

echo "== apt-get install $BASE_PACKAGES"
start=$SECONDS
in_root bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq $BASE_PACKAGES" >"$SCRATCH/base.log" 2>&1 ||
  { tail -20 "$SCRATCH/base.log"; exit 1; }
echo "   done in $((SECONDS - start)) s"

echo "== git clone (commit $REV)"
in_root git config --global --add safe.directory '*'
in_root git clone -q /src /root/cstool
in_root git -C /root/cstool checkout -q "$REV"

status=0
for target in demo check; do
  echo "== make $target"
  start=$SECONDS
  if in_root bash -c "cd /root/cstool && make $target" >"$SCRATCH/$target.log" 2>&1; then
    result=PASS
  else
    result=FAIL
    status=1
    tail -40 "$SCRATCH/$target.log"
  fi
  elapsed=$((SECONDS - start))
  printf '   make %-5s %s in %d min %d s\n' "$target" "$result" $((elapsed / 60)) $((elapsed % 60))
  tail -3 "$SCRATCH/$target.log" | sed 's/^/   | /'
done

echo "== fresh-machine-check: $([ $status -eq 0 ] && echo PASS || echo FAIL) (commit $REV)"
exit $status
