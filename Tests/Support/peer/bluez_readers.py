# -*- coding: utf-8 -*-
'''ReaderKit's BlueZ peer: python-dbusmock's bluez5 template plus card readers.

Run as `/usr/bin/python3 -m dbusmock --system --template bluez_readers.py` on a private bus. It keeps
bluez5's agent and profile managers and adds, on the interface org.readerkit.Peer of `/`:

  AddAdapter(name, powered) -> path           an Adapter1 with Powered and PowerState
  SetAdapterPower(name, powered, power_state) power off (links drop) or on; 'off-blocked' is rfkill
  AddReader(adapter, address, name, rssi, uuids, options) -> path
      options (a{sv}): model, serial, firmware, hardware, manufacturer (s: Device Information strings),
      dis_raw (a{say}: a DIS value as raw bytes, e.g. not UTF-8), dis_fail (as: DIS values whose ReadValue
      raises org.bluez.Error.NotPermitted), battery (y), gatt (b, default true),
      connect_delay_ms, resolve_delay_ms (u), advertise_ms (u: RSSI re-announced that often while
      discovering; 0 = never), sink (b: the SMP characteristic takes writes and answers nothing, for
      measuring the raw write rate), smp_notify_error (s: StartNotify on the SMP characteristic raises
      it, as an unpaired reader whose characteristic needs an authenticated link does)
  SetRSSI(path, rssi)                         one advertisement with that RSSI
  Advertise(path, interval_ms)                start or stop (0) periodic advertisements
  RemoveReader(path)                          InterfacesRemoved, as BlueZ's purge of a lost device
  DropLink(path, reason)                      Disconnected(reason) then Connected=false
  SetBattery(path, level)                     Battery Level notification when notifying
  FailNextConnect(path, error_name)           the next Connect() raises error_name; 'no-reply:MS' blocks
      MS milliseconds (bluetoothd stuck) before it fails, so the client's call times out first
  SetConnectMode(path, mode)                  'normal', or 'never-resolve' (ServicesResolved stays false)
  DiscoveryFilter(adapter) -> a{sv}           the filter the client set
  Calls(path) -> as                           Device1/Adapter1 method names called on path, in order
  SetSMPFault(path, name, value)              a fault of the reader's SMP device (smp_device.py):
      drop_at_fraction (d), answer_delay (d, seconds), slow_after_fraction (d: past it, answers wait
      1 s), wrong_sequence_count (u), wrong_sequence_after_fraction (d: the answer to the first chunk
      sent once the upload reached it carries another sequence number), fail_confirm (b),
      boots_old_image (b), malformed_answer ((group, command)), refuse ((group, command, rc)),
      boot_ms (u: how long a reset keeps the reader away), write_error (s: every WriteValue on the SMP
      characteristic raises this D-Bus error, e.g. org.bluez.Error.NotPermitted; '' writes again)
  SMPState(path) -> a{sv}                     the SMP device: hash (ay), version (s), confirmed (b),
      resets (u), upload_offsets (at: the offsets of the upload chunks it was sent), requests (u)

Each reader's SMP characteristic (write without response, notify) is served by its own SMPDevice from
smp_device.py: a write is handed to it, its answers are notified, and the link actions it asks for are
carried out: "reset" ends the link with Reason.Remote and keeps the reader away (not connectable) for
boot_ms, after which MCUboot's boot rules apply; "drop" ends it with Reason.Timeout (out of range). Its
firmware revision (DIS) is the version the device runs.

Devices advertise only while their adapter is discovering and powered; GATT objects exist between
ServicesResolved and the link's end, as for an unbonded LE device.
'''

import os
import sys
import time

import dbus

from dbusmock import OBJECT_MANAGER_IFACE, mockobject
from dbusmock.templates import bluez5
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smp_device  # noqa: E402  (next to this template)

BUS_NAME = 'org.bluez'
MAIN_OBJ = '/'
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

PEER_IFACE = 'org.readerkit.Peer'
ADAPTER_IFACE = 'org.bluez.Adapter1'
DEVICE_IFACE = 'org.bluez.Device1'
SERVICE_IFACE = 'org.bluez.GattService1'
CHAR_IFACE = 'org.bluez.GattCharacteristic1'
PROPS_IFACE = dbus.PROPERTIES_IFACE

DIS = '0000180a-0000-1000-8000-00805f9b34fb'
BAS = '0000180f-0000-1000-8000-00805f9b34fb'
DIS_CHARS = {'model': '00002a24-0000-1000-8000-00805f9b34fb', 'serial': '00002a25-0000-1000-8000-00805f9b34fb',
             'firmware': '00002a26-0000-1000-8000-00805f9b34fb', 'hardware': '00002a27-0000-1000-8000-00805f9b34fb',
             'manufacturer': '00002a29-0000-1000-8000-00805f9b34fb'}
BATTERY_LEVEL = '00002a19-0000-1000-8000-00805f9b34fb'
SMP_SERVICE = '8d53dc1d-1db7-4cd3-868b-8a527460aa84'
SMP_CHAR = 'da2e7828-fbce-4e01-ae9e-261174997c48'

# Per-device state that is not a D-Bus property, and the GLib timers running, by object path.
STATE = {}
TIMERS = {}


def load(mock, parameters):
    bluez5.load(mock, parameters)
    for key in list(TIMERS):
        cancel(key)
    STATE.clear()


def manager():
    return mockobject.objects['/']


def emit_changed(obj, iface, changes):
    obj.EmitSignal(PROPS_IFACE, 'PropertiesChanged', 'sa{sv}as', [iface, changes, []])


def set_props(obj, iface, changes):
    for key, value in changes.items():
        obj.props[iface][key] = value
    emit_changed(obj, iface, changes)


def later(key, ms, fn):
    cancel(key)

    def fire():
        TIMERS.pop(key, None)
        fn()
        return False
    TIMERS[key] = GLib.timeout_add(max(int(ms), 0), fire)


def cancel(key):
    source = TIMERS.pop(key, None)
    if source is not None:
        GLib.source_remove(source)


def log_call(path, name):
    STATE.setdefault(path, {}).setdefault('calls', []).append(name)


# Adapter1

def SetDiscoveryFilter(adapter, discovery_filter):
    log_call(adapter.path, 'SetDiscoveryFilter')
    STATE.setdefault(adapter.path, {})['filter'] = discovery_filter


def StartDiscovery(adapter):
    log_call(adapter.path, 'StartDiscovery')
    if not adapter.props[ADAPTER_IFACE]['Powered']:
        raise dbus.exceptions.DBusException('Resource Not Ready', name='org.bluez.Error.NotReady')
    set_props(adapter, ADAPTER_IFACE, {'Discovering': dbus.Boolean(True, variant_level=1)})
    for path in devices_of(adapter.path):
        schedule_advertising(path)


def StopDiscovery(adapter):
    log_call(adapter.path, 'StopDiscovery')
    set_props(adapter, ADAPTER_IFACE, {'Discovering': dbus.Boolean(False, variant_level=1)})


def devices_of(adapter_path):
    return [p for p, s in STATE.items() if s.get('adapter') == adapter_path]


def adapter_of(path):
    return mockobject.objects[STATE[path]['adapter']]


@dbus.service.method(PEER_IFACE, in_signature='sb', out_signature='o')
def AddAdapter(_self, name, powered):
    path = '/org/bluez/' + name
    props = {
        'Address': dbus.String('00:1A:7D:DA:71:0' + name[-1], variant_level=1),
        'AddressType': dbus.String('public', variant_level=1),
        'Name': dbus.String('readerkit-host', variant_level=1),
        'Alias': dbus.String('readerkit-host', variant_level=1),
        'Powered': dbus.Boolean(powered, variant_level=1),
        'PowerState': dbus.String('on' if powered else 'off', variant_level=1),
        'Discoverable': dbus.Boolean(False, variant_level=1),
        'Pairable': dbus.Boolean(True, variant_level=1),
        'Discovering': dbus.Boolean(False, variant_level=1),
        'UUIDs': dbus.Array([], signature='s', variant_level=1),
        'Roles': dbus.Array(['central'], signature='s', variant_level=1),
    }
    manager().AddObject(path, ADAPTER_IFACE, props, [
        ('SetDiscoveryFilter', 'a{sv}', '', SetDiscoveryFilter),
        ('StartDiscovery', '', '', StartDiscovery),
        ('StopDiscovery', '', '', StopDiscovery),
        ('RemoveDevice', 'o', '', bluez5.RemoveDevice),
    ])
    STATE[path] = {'calls': []}
    manager().EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
        dbus.ObjectPath(path), {ADAPTER_IFACE: props}])
    return dbus.ObjectPath(path)


@dbus.service.method(PEER_IFACE, in_signature='sbs', out_signature='')
def SetAdapterPower(_self, name, powered, power_state):
    adapter = mockobject.objects['/org/bluez/' + name]
    if not powered:
        set_props(adapter, ADAPTER_IFACE, {'PowerState': dbus.String('on-disabling', variant_level=1)})
        for path in devices_of(adapter.path):
            if mockobject.objects[path].props[DEVICE_IFACE]['Connected']:
                end_link(path, 'org.bluez.Reason.Local')
        set_props(adapter, ADAPTER_IFACE, {
            'Discovering': dbus.Boolean(False, variant_level=1),
            'Powered': dbus.Boolean(False, variant_level=1),
            'PowerState': dbus.String(power_state or 'off', variant_level=1)})
    else:
        set_props(adapter, ADAPTER_IFACE, {
            'Powered': dbus.Boolean(True, variant_level=1),
            'PowerState': dbus.String('on', variant_level=1)})


# Device1

def Connect(device):
    path = device.path
    log_call(path, 'Connect')
    state = STATE[path]
    failure = state.pop('fail_next', None)
    if failure and failure.startswith('no-reply:'):
        # bluetoothd stuck: the reply comes only after the client stopped waiting for it.
        time.sleep(int(failure.split(':', 1)[1]) / 1000)
        raise dbus.exceptions.DBusException('Connection attempt failed', name='org.bluez.Error.Failed')
    if failure:
        raise dbus.exceptions.DBusException('Connection attempt failed', name=failure)
    if not adapter_of(path).props[ADAPTER_IFACE]['Powered']:
        raise dbus.exceptions.DBusException('Resource Not Ready', name='org.bluez.Error.NotReady')
    if device.props[DEVICE_IFACE]['Connected']:
        raise dbus.exceptions.DBusException('Already Connected', name='org.bluez.Error.AlreadyConnected')

    def connected():
        set_props(device, DEVICE_IFACE, {'Connected': dbus.Boolean(True, variant_level=1)})
        if state.get('mode') != 'never-resolve':
            later(path + ':resolve', state['resolve_delay_ms'], resolved)

    def resolved():
        if state.get('gatt', True):
            add_gatt(path)
        set_props(device, DEVICE_IFACE, {'ServicesResolved': dbus.Boolean(True, variant_level=1)})
    # A reader still booting after a reset does not advertise: the link comes up once it does.
    booting_ms = max(0, (state.get('boot_until', 0) - GLib.get_monotonic_time()) // 1000)
    later(path + ':connect', state['connect_delay_ms'] + booting_ms, connected)


def Disconnect(device):
    log_call(device.path, 'Disconnect')
    cancel(device.path + ':connect')
    cancel(device.path + ':resolve')
    if device.props[DEVICE_IFACE]['Connected']:
        end_link(device.path, 'org.bluez.Reason.Local')


def end_link(path, reason):
    device = mockobject.objects[path]
    cancel(path + ':connect')
    cancel(path + ':resolve')
    cancel(path + ':smp')
    if STATE[path].get('smp_device'):
        STATE[path]['smp_device'].link_closed()
    device.EmitSignal(DEVICE_IFACE, 'Disconnected', 'ss', [reason, 'link ended'])
    remove_gatt(path)
    set_props(device, DEVICE_IFACE, {
        'ServicesResolved': dbus.Boolean(False, variant_level=1),
        'Connected': dbus.Boolean(False, variant_level=1)})
    schedule_advertising(path)


@dbus.service.method(PEER_IFACE, in_signature='sssnasa{sv}', out_signature='o')
def AddReader(_self, adapter_name, address, name, rssi, uuids, options):
    adapter_path = '/org/bluez/' + adapter_name
    path = adapter_path + '/dev_' + address.replace(':', '_').upper()
    props = {
        'Address': dbus.String(address, variant_level=1),
        'AddressType': dbus.String('random', variant_level=1),
        'Alias': dbus.String(name or address.replace(':', '-'), variant_level=1),
        'Paired': dbus.Boolean(False, variant_level=1),
        'Bonded': dbus.Boolean(False, variant_level=1),
        'Trusted': dbus.Boolean(False, variant_level=1),
        'Blocked': dbus.Boolean(False, variant_level=1),
        'Connected': dbus.Boolean(False, variant_level=1),
        'ServicesResolved': dbus.Boolean(False, variant_level=1),
        'UUIDs': dbus.Array(uuids, signature='s', variant_level=1),
        'Adapter': dbus.ObjectPath(adapter_path, variant_level=1),
        'RSSI': dbus.Int16(rssi, variant_level=1),
        'ManufacturerData': dbus.Dictionary({}, signature='qv', variant_level=1),
    }
    if name:
        props['Name'] = dbus.String(name, variant_level=1)
    manager().AddObject(path, DEVICE_IFACE, props, [
        ('Connect', '', '', Connect), ('Disconnect', '', '', Disconnect),
    ])
    STATE[path] = {
        'adapter': adapter_path, 'calls': [], 'rssi': int(rssi),
        'connect_delay_ms': int(options.get('connect_delay_ms', 20)),
        'resolve_delay_ms': int(options.get('resolve_delay_ms', 20)),
        'advertise_ms': int(options.get('advertise_ms', 0)),
        'gatt': bool(options.get('gatt', True)),
        'smp': bool(options.get('smp', True)),
        'mtu': int(options.get('mtu', 247)),
        'writes': [],
        'dis': {k: str(options[k]) for k in DIS_CHARS if k in options},
        'dis_raw': {str(k): bytes(v) for k, v in options.get('dis_raw', {}).items()},
        'dis_fail': [str(k) for k in options.get('dis_fail', [])],
        'battery': int(options['battery']) if 'battery' in options else None,
        'boot_ms': int(options.get('boot_ms', 300)),
        'smp_notify_error': str(options['smp_notify_error']) if 'smp_notify_error' in options else None,
    }
    if STATE[path]['smp'] and not options.get('sink', False):
        smp = smp_device.SMPDevice(notification_length=STATE[path]['mtu'] - 3)
        if 'firmware' in options:
            smp.primary['version'] = str(options['firmware'])
        STATE[path]['smp_device'] = smp
    manager().EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
        dbus.ObjectPath(path), {DEVICE_IFACE: props}])
    schedule_advertising(path)
    return dbus.ObjectPath(path)


def schedule_advertising(path):
    state = STATE.get(path)
    if not state or state['advertise_ms'] <= 0:
        return

    def tick():
        if path not in STATE:
            return
        device = mockobject.objects[path]
        adapter = adapter_of(path)
        if adapter.props[ADAPTER_IFACE]['Discovering'] and not device.props[DEVICE_IFACE]['Connected']:
            # A tiny RSSI wobble, so every advertisement is a property change, as with DuplicateData.
            state['wobble'] = 1 - state.get('wobble', 0)
            set_props(device, DEVICE_IFACE, {'RSSI': dbus.Int16(state['rssi'] - state['wobble'], variant_level=1)})
            later(path + ':advertise', state['advertise_ms'], tick)
    later(path + ':advertise', state['advertise_ms'], tick)


@dbus.service.method(PEER_IFACE, in_signature='on', out_signature='')
def SetRSSI(_self, path, rssi):
    STATE[path]['rssi'] = int(rssi)
    set_props(mockobject.objects[path], DEVICE_IFACE, {'RSSI': dbus.Int16(rssi, variant_level=1)})


@dbus.service.method(PEER_IFACE, in_signature='ou', out_signature='')
def Advertise(_self, path, interval_ms):
    STATE[path]['advertise_ms'] = int(interval_ms)
    if interval_ms == 0:
        cancel(path + ':advertise')
    else:
        schedule_advertising(path)


@dbus.service.method(PEER_IFACE, in_signature='o', out_signature='')
def RemoveReader(_self, path):
    for key in [k for k in TIMERS if k.startswith(path + ':')]:
        cancel(key)
    remove_gatt(path)
    manager().RemoveObject(path)
    STATE.pop(path, None)
    manager().EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesRemoved', 'oas', [
        dbus.ObjectPath(path), [DEVICE_IFACE]])


@dbus.service.method(PEER_IFACE, in_signature='os', out_signature='')
def DropLink(_self, path, reason):
    end_link(path, reason)


@dbus.service.method(PEER_IFACE, in_signature='os', out_signature='')
def FailNextConnect(_self, path, error_name):
    STATE[path]['fail_next'] = error_name


@dbus.service.method(PEER_IFACE, in_signature='os', out_signature='')
def SetConnectMode(_self, path, mode):
    STATE[path]['mode'] = mode


@dbus.service.method(PEER_IFACE, in_signature='s', out_signature='a{sv}')
def DiscoveryFilter(_self, adapter_name):
    return STATE['/org/bluez/' + adapter_name].get('filter', dbus.Dictionary({}, signature='sv'))


@dbus.service.method(PEER_IFACE, in_signature='o', out_signature='as')
def Calls(_self, path):
    return dbus.Array(STATE.get(path, {}).get('calls', []), signature='s')


@dbus.service.method(PEER_IFACE, in_signature='oy', out_signature='')
def SetBattery(_self, path, level):
    STATE[path]['battery'] = int(level)
    char = path + '/service000a/char000b'
    if char in mockobject.objects and STATE.get(char, {}).get('notifying'):
        set_props(mockobject.objects[char], CHAR_IFACE, {'Value': dbus.Array([dbus.Byte(level)], signature='y',
                                                                             variant_level=1)})


# GATT

def refused_read():
    raise dbus.exceptions.DBusException('Read not permitted', name='org.bluez.Error.NotPermitted')


def ReadValue(char, _options):
    return dbus.Array([dbus.Byte(b) for b in STATE[char.path]['read']()], signature='y')


def StartNotify(char):
    refusal = STATE[char.path].get('notify_error')
    if refusal:
        raise dbus.exceptions.DBusException('Operation not permitted', name=refusal)
    STATE[char.path]['notifying'] = True
    set_props(char, CHAR_IFACE, {'Notifying': dbus.Boolean(True, variant_level=1)})


def StopNotify(char):
    STATE[char.path]['notifying'] = False
    set_props(char, CHAR_IFACE, {'Notifying': dbus.Boolean(False, variant_level=1)})


def add_object(path, iface, props, methods):
    manager().AddObject(path, iface, props, methods)
    manager().EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
        dbus.ObjectPath(path), {iface: props}])


def add_characteristic(service_path, number, uuid, flags, read):
    path = f'{service_path}/char{number:04x}'
    add_object(path, CHAR_IFACE, {
        'UUID': dbus.String(uuid, variant_level=1),
        'Service': dbus.ObjectPath(service_path, variant_level=1),
        'Flags': dbus.Array(flags, signature='s', variant_level=1),
        'Notifying': dbus.Boolean(False, variant_level=1),
        'Value': dbus.Array([], signature='y', variant_level=1),
    }, [('ReadValue', 'a{sv}', 'ay', ReadValue), ('StartNotify', '', '', StartNotify),
        ('StopNotify', '', '', StopNotify)])
    STATE[path] = {'read': read, 'gatt_of': service_path.rsplit('/', 1)[0]}


def add_service(device_path, number, uuid):
    path = f'{device_path}/service{number:04x}'
    add_object(path, SERVICE_IFACE, {
        'UUID': dbus.String(uuid, variant_level=1),
        'Device': dbus.ObjectPath(device_path, variant_level=1),
        'Primary': dbus.Boolean(True, variant_level=1),
    }, [])
    STATE[path] = {'gatt_of': device_path}
    return path


def WriteValue(char, value, options):
    '''A write to the SMP characteristic: kept, handed to the reader's SMP device, its answers notified
    (after its answer_delay) and its link action carried out.'''
    device = STATE[char.path]['gatt_of'].rsplit('/', 1)[0]
    state = STATE[device]
    if state.get('write_error'):
        raise dbus.exceptions.DBusException('Write failed', name=state['write_error'])
    state['writes'].append(bytes(value))
    smp = state.get('smp_device')
    if smp is None:
        return
    reached = smp.upload_fraction()
    if state.get('wrong_sequence_after') is not None and reached is not None and reached >= state['wrong_sequence_after']:
        state['wrong_sequence_after'] = None
        smp.wrong_sequence_count += 1
    answers = smp.handle(bytes(value))
    action = smp.take_link_action()
    path = char.path

    def deliver():
        for chunk in answers:
            notify(path, chunk)
        if action == 'reset':
            # Zephyr answers the reset, then resets a moment later (MCUMGR_GRP_OS_RESET_MS).
            later(device + ':reset', 20, lambda: reset(device))
        elif action == 'drop':
            end_link(device, 'org.bluez.Reason.Timeout')
    delay = smp.answer_delay
    fraction = smp.upload_fraction()
    if smp.slow_after_fraction is not None and fraction is not None and fraction >= smp.slow_after_fraction:
        delay = max(delay, 1.0)
    if delay > 0:
        later(device + ':smp', int(delay * 1000), deliver)
    else:
        deliver()


def notify(char_path, data):
    if STATE.get(char_path, {}).get('notifying'):
        set_props(mockobject.objects[char_path], CHAR_IFACE, {
            'Value': dbus.Array([dbus.Byte(b) for b in data], signature='y', variant_level=1)})


def reset(path):
    '''The reader resets: its link ends (Reason.Remote) and it is away for boot_ms, then boots.'''
    state = STATE.get(path)
    if state is None:
        return
    if mockobject.objects[path].props[DEVICE_IFACE]['Connected']:
        end_link(path, 'org.bluez.Reason.Remote')
    state['boot_until'] = GLib.get_monotonic_time() + state['boot_ms'] * 1000

    def booted():
        state['smp_device'].boot()
    later(path + ':boot', state['boot_ms'], booted)


def firmware_of(path):
    smp = STATE[path].get('smp_device')
    return smp.primary['version'] if smp else STATE[path]['dis'].get('firmware', '')


@dbus.service.method(PEER_IFACE, in_signature='osv', out_signature='')
def SetSMPFault(_self, path, name, value):
    state = STATE[path]
    smp = state['smp_device']
    if name == 'boot_ms':
        state['boot_ms'] = int(value)
    elif name == 'write_error':
        state['write_error'] = str(value)
    elif name == 'malformed_answer':
        smp.malformed_answer = tuple(int(x) for x in value)
    elif name == 'refuse':
        group, command, rc = (int(x) for x in value)
        smp.refusals[(group, command)] = rc
    elif name in ('drop_at_fraction', 'answer_delay', 'slow_after_fraction'):
        setattr(smp, name, float(value))
    elif name == 'wrong_sequence_count':
        smp.wrong_sequence_count = int(value)
    elif name == 'wrong_sequence_after_fraction':
        state['wrong_sequence_after'] = float(value)
    elif name in ('fail_confirm', 'boots_old_image'):
        setattr(smp, name, bool(value))
    else:
        raise dbus.exceptions.DBusException('no fault ' + name, name='org.readerkit.Peer.Error.NoSuchFault')


@dbus.service.method(PEER_IFACE, in_signature='o', out_signature='a{sv}')
def SMPState(_self, path):
    smp = STATE[path]['smp_device']
    offsets = [off for (group, command, off) in smp.requests if (group, command) == (1, 1) and off is not None]
    return dbus.Dictionary({
        'hash': dbus.Array([dbus.Byte(b) for b in smp.primary['hash']], signature='y', variant_level=1),
        'version': dbus.String(smp.primary['version'], variant_level=1),
        'confirmed': dbus.Boolean(smp.primary['confirmed'], variant_level=1),
        'resets': dbus.UInt32(smp.resets, variant_level=1),
        'upload_offsets': dbus.Array([dbus.UInt64(o) for o in offsets], signature='t', variant_level=1),
        'requests': dbus.UInt32(len(smp.requests), variant_level=1),
    }, signature='sv')


@dbus.service.method(PEER_IFACE, in_signature='o', out_signature='aay')
def SMPWrites(_self, path):
    return dbus.Array([dbus.Array([dbus.Byte(b) for b in w], signature='y') for w in STATE[path]['writes']],
                      signature='ay')


def add_smp(path):
    state = STATE[path]
    service = add_service(path, 0x20, SMP_SERVICE)
    char = f'{service}/char0021'
    add_object(char, CHAR_IFACE, {
        'UUID': dbus.String(SMP_CHAR, variant_level=1),
        'Service': dbus.ObjectPath(service, variant_level=1),
        'Flags': dbus.Array(['write-without-response', 'notify'], signature='s', variant_level=1),
        'Notifying': dbus.Boolean(False, variant_level=1),
        'Value': dbus.Array([], signature='y', variant_level=1),
        'MTU': dbus.UInt16(state['mtu'], variant_level=1),
    }, [('WriteValue', 'aya{sv}', '', WriteValue), ('StartNotify', '', '', StartNotify),
        ('StopNotify', '', '', StopNotify)])
    STATE[char] = {'gatt_of': service, 'notify_error': state.get('smp_notify_error')}


def add_gatt(path):
    state = STATE[path]
    if state['smp']:
        add_smp(path)
    if state['dis'] or state['dis_raw'] or state['dis_fail']:
        service = add_service(path, 1, DIS)
        for number, (key, uuid) in enumerate(DIS_CHARS.items(), start=2):
            if key in state['dis_fail']:
                add_characteristic(service, number, uuid, ['read'], refused_read)
            elif key in state['dis_raw']:
                add_characteristic(service, number, uuid, ['read'], lambda key=key: state['dis_raw'][key])
            elif key == 'firmware' and key in state['dis']:
                add_characteristic(service, number, uuid, ['read'], lambda: firmware_of(path).encode('utf-8'))
            elif key in state['dis']:
                add_characteristic(service, number, uuid, ['read'],
                                   lambda key=key: state['dis'][key].encode('utf-8'))
    if state['battery'] is not None:
        service = add_service(path, 0xa, BAS)
        add_characteristic(service, 0xb, BATTERY_LEVEL, ['read', 'notify'], lambda: bytes([state['battery']]))


def remove_gatt(path):
    owned = sorted((p for p, s in STATE.items() if s.get('gatt_of', '').startswith(path)), reverse=True)
    for child in owned:
        iface = CHAR_IFACE if '/char' in child else SERVICE_IFACE
        manager().RemoveObject(child)
        STATE.pop(child, None)
        manager().EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesRemoved', 'oas', [dbus.ObjectPath(child), [iface]])
