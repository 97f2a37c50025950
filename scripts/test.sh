#!/usr/bin/env bash
# The whole test suite, on a fresh machine: makes sure a valkey-server is
# available (installing one when none is found, see DEVELOPERS.md), then runs
# every test of the workspace and the conformance cases on both backends.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${VALKEY_URL:-}" ]; then
  VALKEY_SERVER="$(bash scripts/install-valkey.sh | tail -n 1)"
  export VALKEY_SERVER
  echo "using valkey-server at $VALKEY_SERVER"
fi

cargo test --workspace --all-features --no-fail-fast
