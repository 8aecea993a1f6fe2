#!/usr/bin/env bash
# Installs the Debian packages the test servers run (ClickHouse, ZooKeeper) when they are missing:
# `pnpm test` runs it first, so the tests work on a fresh machine. The package's own ClickHouse
# service, started on install where the machine allows it, is stopped: the tests start theirs.
set -euo pipefail
if { command -v clickhouse-server || [ -x /usr/sbin/clickhouse-server ]; } >/dev/null && [ -e /usr/share/java/zookeeper.jar ]; then
  exit 0
fi
as_root=$([ "$(id -u)" -eq 0 ] || echo sudo)
install_servers() { $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends clickhouse-server clickhouse-client zookeeper; }
install_servers || { $as_root apt-get update && install_servers; }
$as_root invoke-rc.d clickhouse-server stop || true
