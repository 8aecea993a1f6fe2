#!/usr/bin/env bash
# Installs the Debian packages the test servers run (ClickHouse, ZooKeeper, OpenSSH's sshd) when they
# are missing: `pnpm test` runs it first, so the tests work on a fresh machine. The services the
# packages start on install, where the machine allows it, are stopped: the tests start their own.
# sshd's is disabled too, so that the machine does not start listening for SSH logins at boot.
set -euo pipefail
packages=()
{ command -v clickhouse-server || [ -x /usr/sbin/clickhouse-server ]; } >/dev/null || packages+=(clickhouse-server clickhouse-client)
[ -e /usr/share/java/zookeeper.jar ] || packages+=(zookeeper)
[ -x /usr/sbin/sshd ] || packages+=(openssh-server)
if [ ${#packages[@]} -eq 0 ]; then
  exit 0
fi
as_root=$([ "$(id -u)" -eq 0 ] || echo sudo)
install_servers() { $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"; }
install_servers || { $as_root apt-get update && install_servers; }
if [[ " ${packages[*]} " == *' clickhouse-server '* ]]; then
  $as_root invoke-rc.d clickhouse-server stop || true
fi
if [[ " ${packages[*]} " == *' openssh-server '* ]]; then
  $as_root invoke-rc.d ssh stop || true
  $as_root update-rc.d ssh disable || true
fi
