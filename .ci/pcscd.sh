# PC/SC for the tests, sourced by .ci/run: installs pcscd with the vsmartcard virtual reader driver
# (vpcd), starts pcscd in the foreground with a configuration directory that holds only the vpcd
# readers ("Virtual PCD 00 00" on TCP 35963, "Virtual PCD 00 01" on 35964, where the tests' virtual
# cards connect), waits (bounded) for it to be ready, and stops it by PID when the caller's shell
# exits, whatever happens.
#
#   source .ci/pcscd.sh
#   pcscd_install            # apt-get update + install, only when something is missing
#   pcscd_start              # exports READERKIT_PCSCD_DIR (log, pid) for the tests
#   ...                      # pcscd_stop runs from the EXIT trap the caller sets (see .ci/run)
#
# Run on its own, `bash .ci/pcscd.sh start` installs and starts pcscd in the background for local
# runs and prints how to stop it.

pcscd_install() {
  if command -v pcscd >/dev/null && [ -f /usr/lib/pcsc/drivers/serial/libifdvpcd.so ] \
    && [ -e /usr/lib/x86_64-linux-gnu/libpcsclite.so.1 -o -e /usr/lib/aarch64-linux-gnu/libpcsclite.so.1 ]; then
    return 0
  fi
  echo "pcscd: installing pcscd, libpcsclite-dev and vsmartcard-vpcd"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends pcscd libpcsclite-dev vsmartcard-vpcd
}

pcscd_start() {
  if [ -S /run/pcscd/pcscd.comm ] && pgrep -x pcscd >/dev/null; then
    echo "pcscd: one runs already (pid $(pgrep -x pcscd | tr '\n' ' ')); the tests use it" >&2
    return 0
  fi
  READERKIT_PCSCD_DIR=$(mktemp -d /tmp/readerkit-pcscd.XXXXXX)
  export READERKIT_PCSCD_DIR
  mkdir "$READERKIT_PCSCD_DIR/conf"
  # Only the virtual readers: a copy of the package's vpcd file, nothing from /etc/reader.conf.d.
  cat >"$READERKIT_PCSCD_DIR/conf/vpcd" <<'CONF'
FRIENDLYNAME "Virtual PCD"
DEVICENAME   /dev/null:0x8C7B
LIBPATH      /usr/lib/pcsc/drivers/serial/libifdvpcd.so
CHANNELID    0x8C7B
CONF
  # The path must be absolute: pcscd changes directory to /.
  pcscd --foreground --debug --config "$READERKIT_PCSCD_DIR/conf" >"$READERKIT_PCSCD_DIR/log" 2>&1 &
  echo $! >"$READERKIT_PCSCD_DIR/pid"
  local waited=0
  until grep -qs "daemon ready" "$READERKIT_PCSCD_DIR/log"; do
    if ! kill -0 "$(cat "$READERKIT_PCSCD_DIR/pid")" 2>/dev/null; then
      echo "pcscd: exited before it was ready; its log:" >&2
      tail -20 "$READERKIT_PCSCD_DIR/log" >&2
      return 1
    fi
    if [ "$waited" -ge 100 ]; then
      echo "pcscd: not ready after 10 s; its log:" >&2
      tail -20 "$READERKIT_PCSCD_DIR/log" >&2
      pcscd_stop
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  echo "pcscd: ready (pid $(cat "$READERKIT_PCSCD_DIR/pid"), log $READERKIT_PCSCD_DIR/log)"
}

# Stops the pcscd pcscd_start started: SIGTERM, then SIGKILL after 5 s. Safe to call twice.
pcscd_stop() {
  [ -n "${READERKIT_PCSCD_DIR:-}" ] && [ -f "$READERKIT_PCSCD_DIR/pid" ] || return 0
  local pid
  pid=$(cat "$READERKIT_PCSCD_DIR/pid")
  if kill -TERM "$pid" 2>/dev/null; then
    local waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 50 ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "pcscd: still running 5 s after SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -rf "$READERKIT_PCSCD_DIR"
  unset READERKIT_PCSCD_DIR
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    start)
      pcscd_install
      pcscd_start
      echo "pcscd: stop it with: kill \$(cat $READERKIT_PCSCD_DIR/pid)"
      ;;
    *)
      echo "usage: bash .ci/pcscd.sh start   (or source it and call pcscd_install, pcscd_start, pcscd_stop)" >&2
      exit 64
      ;;
  esac
fi
