#!/usr/bin/env bash
# Builds the Debian package of ringkv with dpkg-deb.
#   scripts/package.sh [--binary PATH] [--out DIR]
# Defaults: build/ringkv-server (built with scripts/build.sh release when
# missing), output in build/. Prints the path of ringkv_<version>_amd64.deb.
#
# Contents: /usr/bin/ringkv-server; /etc/ringkv/ringkv.conf (scripts/ringkv.conf
# with Debian paths, a conffile); ringkv-server.service and the template
# ringkv-server@.service; /etc/logrotate.d/ringkv-server; maintainer scripts
# (scripts/debian/) that create the ringkv system user and its directories,
# and on purge remove them. Depends: the packages of the shared libraries the
# binary links (found with ldd + dpkg -S on this machine), and adduser.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=$root/build/ringkv-server
out=$root/build
while (($#)); do
  case $1 in
    --binary) binary=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--binary PATH] [--out DIR]" >&2; exit 2 ;;
  esac
done
[[ -x $binary ]] || "$root/scripts/build.sh" release >&2
version=$(sed -n 's/.*kRingkvVersion\[\] = "\(.*\)";/\1/p' "$root/server/version.h")
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/ringkv

install -D -m 0755 "$binary" "$pkg/usr/bin/ringkv-server"
strip --strip-unneeded "$pkg/usr/bin/ringkv-server" 2>/dev/null || true
# The stock configuration with Debian's paths and a loopback-only bind.
install -d "$pkg/etc/ringkv"
sed -e 's|^bind \* -::\*$|bind 127.0.0.1 -::1|' \
    -e 's|^dir \./$|dir /var/lib/ringkv|' \
    -e 's|^logfile ""$|logfile /var/log/ringkv/ringkv-server.log|' \
    -e 's|^pidfile ""$|pidfile /run/ringkv/ringkv-server.pid|' \
    -e 's|^supervised no$|supervised auto|' \
    "$root/scripts/ringkv.conf" >"$pkg/etc/ringkv/ringkv.conf"
for want in 'bind 127.0.0.1 -::1' 'dir /var/lib/ringkv' 'logfile /var/log/ringkv/ringkv-server.log' \
            'pidfile /run/ringkv/ringkv-server.pid' 'supervised auto'; do
  grep -qxF "$want" "$pkg/etc/ringkv/ringkv.conf" || { echo "package.sh: ringkv.conf lacks '$want'" >&2; exit 1; }
done
chmod 0640 "$pkg/etc/ringkv/ringkv.conf"
install -D -m 0644 "$root/scripts/debian/ringkv-server.service" "$pkg/lib/systemd/system/ringkv-server.service"
install -D -m 0644 "$root/scripts/debian/ringkv-server@.service" "$pkg/lib/systemd/system/ringkv-server@.service"
install -D -m 0644 "$root/scripts/debian/ringkv-server.logrotate" "$pkg/etc/logrotate.d/ringkv-server"
install -D -m 0644 "$root/docs/deploy.md" "$pkg/usr/share/doc/ringkv/deploy.md"
install -D -m 0644 "$root/README.md" "$pkg/usr/share/doc/ringkv/README.md"

# Depends: the package of each shared library the binary loads.
# (usrmerge: a library may be registered under /lib or /usr/lib, by its
# link name or its real name: all the candidates go to one dpkg -S, which
# reads the package database once.)
candidates=()
for lib in $(ldd "$binary" | awk '/=> \//{print $3}'); do
  real=$(readlink -f "$lib")
  for p in "$lib" "$real"; do candidates+=("$p" "${p#/usr}" "/usr${p#/usr}"); done
done
deps=$( (dpkg -S "${candidates[@]}" 2>/dev/null || true) | cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g')
install -d "$pkg/DEBIAN"
cat >"$pkg/DEBIAN/control" <<CONTROL
Package: ringkv
Version: $version
Architecture: $arch
Maintainer: ringkv developers <ringkv@localhost>
Section: database
Priority: optional
Depends: adduser, ${deps}
Installed-Size: $(du -sk "$pkg" --exclude=DEBIAN | cut -f1)
Description: Redis-compatible in-memory data server on io_uring
 ringkv speaks Redis 7.0's protocol byte for byte, reads redis.conf files
 and replicates with redis-server. This package runs it as a systemd
 service (ringkv-server.service, or ringkv-server@NAME.service for several
 instances) under the ringkv system user.
CONTROL
echo /etc/ringkv/ringkv.conf >"$pkg/DEBIAN/conffiles"
echo /etc/logrotate.d/ringkv-server >>"$pkg/DEBIAN/conffiles"
install -m 0755 "$root/scripts/debian/postinst" "$root/scripts/debian/prerm" "$root/scripts/debian/postrm" "$pkg/DEBIAN/"

mkdir -p "$out"
deb=$out/ringkv_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zgzip --build "$pkg" "$deb" >/dev/null
echo "$deb"
