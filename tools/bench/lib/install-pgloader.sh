#!/usr/bin/env bash
# Installs Debian's pgloader, the peer the e2e bench measures beside `psql \copy`, when it is missing:
# the bench runs it before its rounds, so it works on a fresh machine. Only the bench needs it, so it
# is not in tools/test-servers/install.sh, which `pnpm test` and CI run.
set -euo pipefail
command -v pgloader >/dev/null && exit 0
as_root=$([ "$(id -u)" -eq 0 ] || echo sudo)
install_pgloader() { $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends pgloader; }
install_pgloader || { $as_root apt-get update && install_pgloader; }
