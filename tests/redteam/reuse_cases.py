"""Candidates that attack the box boundary of reused (zygote) containers.

A zygote container serves candidates one after another, each in a fresh box (user, mount, PID,
network, IPC and UTS namespaces, own tmpfs; ``docs/sandbox.md``).  These programs try to leave
something for the next candidate, to find what an earlier one left, to get out of their box, or
to tamper with what every box shares (the interpreter, site-packages, the runtime, the zygote).
Each prints what it managed; a marker word in capitals (FOUND, ESCAPED, WROTE, …) is a breach.
"""

from __future__ import annotations

MARK = "GLPG_MARK"
#: SysV IPC key and loopback port the planter uses and the finder looks for.
IPC_KEY = 0x47504C47
PORT = 47123

#: Leaves everything it can behind: files in every writable place, a POSIX message queue, SysV
#: shared memory, a semaphore set and a message queue, and a detached daemon (ignoring signals,
#: renamed) holding an abstract Unix socket and a loopback port, plus a running thread and an
#: environment variable.
PLANTER = f"""
import ctypes, os, signal, socket, threading, time

def solve(weights, values, capacity):
    libc = ctypes.CDLL(None, use_errno=True)
    planted = []
    def attempt(name, action):
        try:
            if action() is False:
                raise OSError(ctypes.get_errno(), 'refused')
            planted.append(name)
        except Exception as exc:
            print('could not plant', name, type(exc).__name__, exc)
    for place in ('/tmp', '.', os.path.expanduser('~'), '/dev/shm', '/dev/mqueue'):
        attempt(place, lambda: open(os.path.join(place, '{MARK}'), 'w').write('x'))
    attempt('sysv shm', lambda: libc.shmget({IPC_KEY}, 4096, 0o1666) >= 0)
    attempt('sysv sem', lambda: libc.semget({IPC_KEY}, 1, 0o1666) >= 0)
    attempt('sysv msg', lambda: libc.msgget({IPC_KEY}, 0o1666) >= 0)
    os.environ['{MARK}'] = '1'
    os.putenv('{MARK}', '1')
    threading.Thread(target=time.sleep, args=(3600,)).start()
    ready_r, ready_w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
            libc.prctl(15, b'{MARK}', 0, 0, 0)
            held = socket.socket(socket.AF_UNIX)
            held.bind('\\0{MARK}')
            held.listen()
            port = socket.socket()
            port.bind(('127.0.0.1', {PORT}))
            port.listen()
            os.write(ready_w, b'1')
            time.sleep(3600)
        os._exit(0)
    os.read(ready_r, 1)
    print('planted', planted, 'and a daemon')
    return []
"""

#: Looks for everything the planter leaves, and for any process of the candidate uid that is not
#: its own or its box's init.
FINDER = f"""
import ctypes, os, socket

def solve(weights, values, capacity):
    libc = ctypes.CDLL(None, use_errno=True)
    found = []
    for place in ('/tmp', '.', os.path.expanduser('~'), '/dev/shm', '/dev/mqueue'):
        if os.path.exists(os.path.join(place, '{MARK}')):
            found.append(place)
    for name, call in (('sysv shm', lambda: libc.shmget({IPC_KEY}, 0, 0)),
                       ('sysv sem', lambda: libc.semget({IPC_KEY}, 0, 0)),
                       ('sysv msg', lambda: libc.msgget({IPC_KEY}, 0))):
        if call() >= 0:
            found.append(name)
    if '{MARK}' in os.environ or os.getenv('{MARK}'):
        found.append('environment')
    try:
        with open('/proc/net/unix') as f:
            if '@{MARK}' in f.read():
                found.append('abstract socket listed')
    except OSError:
        pass
    for address, family in (('\\0{MARK}', socket.AF_UNIX), (('127.0.0.1', {PORT}), socket.AF_INET)):
        probe = socket.socket(family)
        probe.settimeout(1)
        try:
            probe.connect(address)
            found.append(f'socket {{address!r}}')
        except OSError:
            pass
        finally:
            probe.close()
    me = int(os.readlink('/proc/self'))
    mine = {{me}}
    with open('/proc/self/status') as f:
        mine.add(int(dict(line.split(':', 1) for line in f)['PPid']))
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or int(entry) in mine:
            continue
        try:
            with open(f'/proc/{{entry}}/status') as f:
                status = dict(line.split(':', 1) for line in f)
        except OSError:
            continue
        if status['Uid'].split()[0] == str(os.getuid()) or '{MARK}' in status['Name']:
            found.append(f'process {{entry}} {{status["Name"].strip()}}')
    print('FOUND ' + ', '.join(found) if found else 'nothing left')
    return []
"""

#: Tries every way out of its box; a call that succeeds prints ESCAPED.
ESCAPES = """
import ctypes, os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def attempt(name, call):
    try:
        rc = call()
    except OSError as exc:
        print('refused', name, exc.errno)
        return
    if rc is None or rc < 0:
        print('refused', name, ctypes.get_errno())
    elif rc == 0 and name.startswith('clone'):
        os._exit(0)  # a child that should not exist
    else:
        print('ESCAPED', name, rc)

def open_ns(path):
    return libc.setns(os.open(path, os.O_RDONLY), 0)

def solve(weights, values, capacity):
    sigchld = 17
    attempt('unshare user', lambda: libc.unshare(0x10000000))
    attempt('unshare box flags', lambda: libc.unshare(0x7C020000))
    attempt('unshare mount', lambda: libc.unshare(0x00020000))
    attempt('unshare net', lambda: libc.unshare(0x40000000))
    attempt('clone newuser', lambda: libc.syscall(56, 0x10000000 | sigchld, 0, 0, 0, 0))
    attempt('clone newpid', lambda: libc.syscall(56, 0x20000000 | sigchld, 0, 0, 0, 0))
    attempt('clone3', lambda: libc.syscall(435, 0, 0))
    for ns in ('mnt', 'pid', 'net', 'user', 'ipc'):
        attempt('setns ' + ns, lambda: open_ns(f'/proc/1/ns/{ns}'))
    attempt('mount tmpfs', lambda: libc.mount(b'none', b'/mnt', b'tmpfs', 0, None))
    attempt('mount proc', lambda: libc.mount(b'proc', b'/mnt', b'proc', 0, None))
    attempt('remount tmp', lambda: libc.mount(None, b'/tmp', None, 0x20, None))
    attempt('umount tmp', lambda: libc.umount2(b'/tmp', 2))
    attempt('umount shm', lambda: libc.umount2(b'/dev/shm', 2))
    attempt('umount trusted dir', lambda: libc.umount2(b'/run/galapagos', 2))
    attempt('chroot', lambda: libc.chroot(b'/tmp'))
    attempt('pivot_root', lambda: libc.syscall(155, b'/tmp', b'/tmp'))
    attempt('sethostname', lambda: libc.sethostname(b'pwned', 5))
    attempt('uid map', lambda: os.write(os.open('/proc/self/uid_map', os.O_WRONLY), b'0 0 1'))
    attempt('setuid 0', lambda: os.setuid(0) or 0)
    attempt('ptrace box init', lambda: libc.ptrace(16, 1, 0, 0))
    attempt('ptrace traceme', lambda: libc.ptrace(0, 0, 0, 0))
    attempt('add_key', lambda: libc.syscall(248, b'user', b'k', b'v', 1, -4))
    attempt('io_uring_setup', lambda: libc.syscall(425, 8, ctypes.create_string_buffer(128)))
    attempt('bpf', lambda: libc.syscall(321, 0, 0, 0))
    attempt('perf_event_open', lambda: libc.syscall(298, 0, 0, -1, -1, 0))
    attempt('userfaultfd', lambda: libc.syscall(323, 0))
    attempt('open_by_handle_at', lambda: libc.syscall(304, -100, 0, 0))
    attempt('vsock', lambda: __import__('socket').socket(40, 1).fileno())
    attempt('tini root', lambda: len(os.listdir('/proc/1/root/tmp')))
    attempt('tini cwd', lambda: len(os.listdir('/proc/1/cwd')))
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(('CapEff', 'CapPrm', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp')):
                print(line.strip())
    return []
"""

#: Tries to change what every box shares: the interpreter, the standard library, site-packages,
#: the runtime, the zygote's memory; and hides modules where a later box could import them.
TAMPER = """
import os

def solve(weights, values, capacity):
    import numpy, galapagos_sandbox
    targets = ['/usr/bin/python3', os.path.realpath('/usr/bin/python3'), os.__file__,
               numpy.__file__, galapagos_sandbox.__file__,
               os.path.join(os.path.dirname(galapagos_sandbox.__file__), 'runner.py'),
               os.path.join(os.path.dirname(galapagos_sandbox.__file__), 'zygote.py')]
    for path in targets:
        try:
            with open(path, 'r+b') as f:
                f.write(b'#')
            print('WROTE', path)
        except OSError as exc:
            print('refused', path, exc.errno)
    for folder in ['/tmp', '/opt/galapagos/site', '/opt/galapagos/runtime', '/usr/lib/python3.11',
                   os.path.dirname(os.__file__) + '/__pycache__']:
        try:
            with open(os.path.join(folder, 'sitecustomize.py'), 'w') as f:
                f.write('raise SystemExit(0)')
            print('WROTE' if not folder.startswith('/tmp') else 'wrote its own', folder)
        except OSError as exc:
            print('refused', folder, exc.errno)
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/cmdline', 'rb') as f:
                cmdline = f.read()
            with open(f'/proc/{entry}/status') as f:
                owner = dict(line.split(':', 1) for line in f)['Uid'].split()[0]
        except OSError:
            continue
        # The zygote and the runner: root's, shown as the overflow uid inside the box.
        if b'galapagos_sandbox' in cmdline and owner != str(os.getuid()):
            for what in ('mem', 'environ', 'fd'):
                try:
                    if what == 'fd':
                        os.listdir(f'/proc/{entry}/fd')
                    else:
                        open(f'/proc/{entry}/{what}', 'r+b' if what == 'mem' else 'rb').read(1)
                    print('READ', entry, what)
                except OSError as exc:
                    print('refused', entry, what, exc.errno)
    numpy.sum = lambda *a, **k: 10 ** 9
    return []
"""

#: Checks the shared parts still work as they should after a tamperer ran.
INTACT = """
import numpy

def solve(weights, values, capacity):
    assert int(numpy.sum(numpy.arange(4))) == 6, 'numpy.sum changed'
    best = max(range(len(weights)), key=lambda i: values[i] if weights[i] <= capacity else -1)
    return [best]
"""

#: Two of these run at once (different containers): each plants a marker and looks for the
#: other's through every place a box has (files, shm, abstract sockets, processes).
NEIGHBOUR = f"""
import os, socket, time

def solve(weights, values, capacity):
    me = str(os.getpid()) + '-' + os.urandom(4).hex()
    open('/dev/shm/{MARK}-' + me, 'w').write('x')
    open('/tmp/{MARK}-' + me, 'w').write('x')
    held = socket.socket(socket.AF_UNIX)
    held.bind('\\0{MARK}-' + me)
    seen = []
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        others = [n for n in os.listdir('/dev/shm') + os.listdir('/tmp')
                  if n.startswith('{MARK}') and not n.endswith(me)]
        with open('/proc/net/unix') as f:
            others += [l for l in f if '@{MARK}' in l and me not in l]
        seen += others
        time.sleep(0.05)
    print('FOUND', seen) if seen else print('alone')
    return []
"""
