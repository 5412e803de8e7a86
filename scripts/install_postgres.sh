#!/usr/bin/env bash
# Installs Debian's PostgreSQL server binaries for the study storage tests when they are missing
# (the tests start a throwaway cluster of their own with initdb / pg_ctl; no service is used).
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q postgresql
