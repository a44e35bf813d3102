#!/usr/bin/env bash
# The BlueZ peer for BlueZTests: a private dbus-daemon and python-dbusmock's bluez5 template with
# ReaderKit's readers (Tests/Support/peer/bluez_readers.py). The tests start and stop their own bus
# and peer (by PID, per test); this script only installs what they need, from Debian. Never `bluez`
# itself: it pulls udev and upgrades systemd, and the CI kernel has no Bluetooth.
set -euo pipefail
if [ -x /usr/bin/dbus-daemon ] && /usr/bin/python3 -c 'import dbusmock, dbus, gi' 2>/dev/null; then
  exit 0
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends dbus-daemon python3-dbusmock
/usr/bin/python3 -c 'import dbusmock, dbus, gi'
