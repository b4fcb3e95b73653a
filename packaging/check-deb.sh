#!/usr/bin/env bash
# Checks what a go-cluster .deb holds: packaging/check-deb.sh FILE.deb
set -euo pipefail
deb="$1"
contents="$(dpkg-deb --contents "$deb")"
info="$(dpkg-deb --info "$deb")"
fail() { echo "check-deb: $deb: $*" >&2; exit 1; }
want() { # mode path
  grep -qE "^$1 .* \./${2#/}\$" <<<"$contents" || fail "no $2 with mode $1"
}
want -rwxr-xr-x /usr/bin/go-cluster
want -rw-r--r-- /usr/share/man/man1/go-cluster.1.gz
want -rw-r--r-- /lib/systemd/system/go-cluster-agent.service
want -rw-r----- /etc/go-cluster/agent.yaml
want -rw-r--r-- /usr/share/doc/go-cluster/agent.md
want -rw-r--r-- /usr/share/doc/go-cluster/examples/50-go-cluster-agent.rules
want -rw-r--r-- /usr/share/go-cluster/monitoring/go-cluster-dashboard.json
want -rw-r--r-- /usr/share/go-cluster/monitoring/go-cluster-alerts.yaml
grep -q "Package: go-cluster" <<<"$info" || fail "not the go-cluster package"
conffiles="$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)"
grep -qx /etc/go-cluster/agent.yaml <<<"$conffiles" || fail "agent.yaml is not a conffile"
control="$(dpkg-deb --ctrl-tarfile "$deb" | tar -t)"
for s in preinst postinst prerm; do
  grep -qx "./$s" <<<"$control" || fail "no $s script"
done
# The man page renders: man -l of the page as shipped, no warning from groff.
command -v man >/dev/null || fail "man is needed to check the man page (apt-get install man-db)"
page="$(mktemp -d)"
trap 'rm -rf "$page"' EXIT
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/man/man1/go-cluster.1.gz > "$page/go-cluster.1.gz"
rendered="$(LC_ALL=C MANWIDTH=80 man --warnings -P cat -l "$page/go-cluster.1.gz" 2>"$page/warnings")" || fail "man -l of the man page failed: $(cat "$page/warnings")"
[ ! -s "$page/warnings" ] || fail "man -l of the man page warned: $(cat "$page/warnings")"
grep -q "go-cluster run" <<<"$rendered" || fail "the man page does not describe go-cluster run"
grep -q "go-cluster agent" <<<"$rendered" || fail "the man page does not describe go-cluster agent"
echo "check-deb: $deb: ok"
