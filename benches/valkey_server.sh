# Sourced by the Valkey bench drivers (valkey_peers.sh,
# script_instructions.sh): installing their tools, and one valkey-server on
# a free 127.0.0.1 port, stopped on exit.

# Installs packages with apt-get (with sudo when not root).
apt_install() {
    local sudo=""
    if [[ "$(id -u)" != 0 ]]; then sudo="sudo"; fi
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >&2
}

# Usage: start_valkey TRIES COMMAND...
# Runs COMMAND (a valkey-server command line, behind a wrapper such as env
# or valgrind if any) in the background on a free port with nothing saved,
# its files and log in the existing directory $DIR; sets PORT, SERVER_PID
# and CLI (redis-cli on it); on exit stops the server and removes $DIR.
# Waits up to TRIES tenths of a second for it to answer PING.
start_valkey() {
    local tries="$1"
    shift
    PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "$@" --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
        --daemonize no --dir "$DIR" >"$DIR/valkey.log" 2>&1 &
    SERVER_PID=$!
    trap stop_valkey EXIT
    CLI=(redis-cli -h 127.0.0.1 -p "$PORT")
    for _ in $(seq "$tries"); do
        [[ "$("${CLI[@]}" PING 2>/dev/null)" == PONG ]] && break
        sleep 0.1
    done
}

# Stops the server of start_valkey and removes $DIR (its exit trap).
stop_valkey() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    rm -rf "$DIR"
}
