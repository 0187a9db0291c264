#!/usr/bin/env bash
# The Debian package, installed on this machine and removed again:
#   tests/deploy/package_test.sh path/to/ringkv-server
# builds ringkv_<version>_<arch>.deb (scripts/package.sh), checks its units
# with systemd-analyze verify, installs it with dpkg -i, checks the files,
# the ringkv user and directories, starts the installed binary on the
# installed config in the foreground as the ringkv user (port and log
# overridden) and PINGs it, then dpkg --purge must leave nothing behind.
# Exit 77 (ctest: skipped) when not root, without dpkg, or when a ringkv
# package is installed already (it is not ours to replace).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
binary=$(readlink -f "$1")
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "the package test installs with dpkg and needs root"
command -v dpkg-deb >/dev/null && command -v dpkg >/dev/null || skip "dpkg is not installed"
command -v redis-cli >/dev/null || skip "redis-cli is not installed"
if dpkg-query -W -f='${Status}' ringkv 2>/dev/null | grep -q "ok installed"; then
  skip "a ringkv package is already installed here"
fi
work=$(mktemp -d /tmp/ringkv-package-XXXXXX)
server_pid=""
cleanup() {
  [[ -z $server_pid ]] || kill -9 "$server_pid" 2>/dev/null || true
  dpkg --purge ringkv >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

deb=$("$root/scripts/package.sh" --binary "$binary" --out "$work")
[[ $(basename "$deb") =~ ^ringkv_[0-9.]+_[a-z0-9]+\.deb$ ]] || fail "package name $(basename "$deb")"
echo "built $(basename "$deb")"
listing=$(dpkg-deb -c "$deb")
for f in ./usr/bin/ringkv-server ./etc/ringkv/ringkv.conf ./lib/systemd/system/ringkv-server.service \
         ./lib/systemd/system/ringkv-server@.service ./etc/logrotate.d/ringkv-server; do
  grep -q " $f\$" <<<"$listing" || fail "$f missing from the package"
done

# The units, as systemd reads them (the template through an instance).
mkdir -p "$work/units"
dpkg-deb -x "$deb" "$work/pkg"
cp "$work/pkg/lib/systemd/system/ringkv-server.service" "$work/units/"
cp "$work/pkg/lib/systemd/system/ringkv-server@.service" "$work/units/ringkv-server@demo.service"

dpkg -i "$deb" >"$work/dpkg-install.log" 2>&1 || { cat "$work/dpkg-install.log"; fail "dpkg -i"; }
for f in /usr/bin/ringkv-server /etc/ringkv/ringkv.conf /lib/systemd/system/ringkv-server.service \
         /lib/systemd/system/ringkv-server@.service /etc/logrotate.d/ringkv-server; do
  [[ -e $f ]] || fail "$f not installed"
done
getent passwd ringkv >/dev/null || fail "no ringkv user"
for d in /var/lib/ringkv /var/log/ringkv /etc/ringkv; do
  [[ $(stat -c %U "$d") == ringkv ]] || fail "$d is not owned by ringkv"
done
grep -qx 'dir /var/lib/ringkv' /etc/ringkv/ringkv.conf || fail "ringkv.conf has no Debian dir"
echo "installed: files, ringkv user, directories"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$work/units/ringkv-server.service" "$work/units/ringkv-server@demo.service" \
    >"$work/verify.log" 2>&1 || { cat "$work/verify.log"; fail "systemd-analyze verify"; }
  [[ ! -s $work/verify.log ]] || { cat "$work/verify.log"; fail "systemd-analyze verify printed warnings"; }
  echo "systemd-analyze verify: both units clean"
fi
/usr/bin/ringkv-server --check-config /etc/ringkv/ringkv.conf >/dev/null || fail "--check-config on the installed config"

# The installed binary on the installed config, as the service runs it
# (user ringkv, dir /var/lib/ringkv), in the foreground on a free port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
runuser -u ringkv -- /usr/bin/ringkv-server /etc/ringkv/ringkv.conf --port "$port" --daemonize no \
  --pidfile "" --logfile "" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && break
  sleep 0.05
done
[[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] || { cat "$work/server.log"; fail "no PONG"; }
[[ $(redis-cli -p "$port" config get dir | tail -1) == /var/lib/ringkv ]] || fail "dir is not /var/lib/ringkv"
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
wait "$server_pid" || fail "the server exited with $?"
server_pid=""
echo "the installed server answered PING on port $port and shut down"

dpkg --purge ringkv >"$work/dpkg-purge.log" 2>&1 || { cat "$work/dpkg-purge.log"; fail "dpkg --purge"; }
for f in /usr/bin/ringkv-server /etc/ringkv /var/lib/ringkv /var/log/ringkv /lib/systemd/system/ringkv-server.service; do
  [[ ! -e $f ]] || fail "$f left after purge"
done
! getent passwd ringkv >/dev/null || fail "the ringkv user is left after purge"
! getent group ringkv >/dev/null || fail "the ringkv group is left after purge"
echo "PASS: package built, installed, served, purged"
