"""The adversarial candidates, by family (reference/sandboxes.md §7).

Each case is a program for the knapsack fixture (``solve(weights, values, capacity)``) plus what
the harness must record: the allowed statuses, the highest score it may get (0 for every
candidate that does not honestly solve the task), and text its captured stdout must (not)
contain — probes print what they managed, which is how a test sees an escape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.redteam.conftest import HONEYPOT, MARKER


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    source: str
    statuses: frozenset[str]
    max_score: float = 0.0
    stdout_has: tuple[str, ...] = ()
    stdout_lacks: tuple[str, ...] = ()
    tags: frozenset[str] = field(default_factory=frozenset)


def case(
    name: str,
    family: str,
    body: str,
    statuses: str,
    *,
    imports: str = "",
    top: str = "",
    **kw: object,
) -> Case:
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    source = f"{imports}\n{top}\ndef solve(weights, values, capacity):\n{lines}\n"
    return Case(name, family, source, frozenset(statuses.split()), **kw)  # type: ignore[arg-type]


RESOURCE = [
    case(
        "fork_bomb",
        "resource",
        """
while True:
    try:
        os.fork()
    except OSError:
        pass
""",
        "timeout",
        imports="import os",
    ),
    case("memory_eager", "resource", "x = bytearray(1 << 30)\nreturn []", "oom"),
    case(
        "memory_lazy_mmap",
        "resource",
        """
m = mmap.mmap(-1, 1 << 30)
for i in range(0, len(m), 4096):
    m[i] = 1
return []
""",
        "oom",
        imports="import mmap",
    ),
    case(
        "memory_growth",
        "resource",
        """
chunks = []
while True:
    chunks.append(b'x' * (1 << 20))
""",
        "oom",
    ),
    case("busy_loop", "resource", "while True:\n    pass", "timeout"),
    case("sleep_past_budget", "resource", "time.sleep(3600)", "timeout", imports="import time"),
    case(
        "ignore_sigterm",
        "resource",
        """
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
time.sleep(3600)
""",
        "timeout",
        imports="import signal, time",
    ),
    case("stdout_flood", "resource", "while True:\n    print('x' * 10000)", "output_limit"),
    case(
        "stderr_flood",
        "resource",
        "while True:\n    sys.stderr.write('y' * 10000)",
        "output_limit",
        imports="import sys",
    ),
    case(
        "fill_tmp",
        "resource",
        f"""
try:
    with open('/tmp/{MARKER}', 'wb') as f:
        while True:
            f.write(b'x' * (1 << 20))
except OSError as exc:
    print('tmp full', exc.errno)
return []
""",
        "ok",
        stdout_has=("tmp full",),
    ),
    case(
        "fd_exhaustion",
        "resource",
        """
files = []
try:
    while True:
        files.append(open('/dev/null'))
except OSError as exc:
    print('fds exhausted after', len(files))
return []
""",
        "ok",
        stdout_has=("fds exhausted",),
    ),
    case(
        "deep_recursion",
        "resource",
        """
sys.setrecursionlimit(10 ** 7)
def down(n):
    return down(n + 1) + 1
return down(0)
""",
        "crash oom",
        imports="import sys",
    ),  # C-stack overflow, or frames eat the memory first
    case(
        "thread_bomb",
        "resource",
        """
started = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        started += 1
except RuntimeError:
    print('threads stopped at', started)
return []
""",
        "ok",
        imports="import threading, time",
        stdout_has=("threads stopped",),
    ),
    case("absurd_huge_int", "resource", "return [10 ** 100000]", "invalid"),
    case("absurd_nan", "resource", "return [float('nan'), float('inf')]", "invalid"),
    case(
        "absurd_deep_nesting",
        "resource",
        """
value = []
for _ in range(100000):
    value = [value]
return value
""",
        "invalid",
    ),
    # Rejected as invalid, or stopped by the budget on a loaded machine: contained either way.
    case("absurd_long_answer", "resource", "return list(range(200_000))", "invalid timeout"),
]

ISOLATION = [
    case(
        "network_connect",
        "isolation",
        """
for host in ['1.1.1.1', '172.17.0.1', '10.0.0.1']:
    try:
        socket.create_connection((host, 80), timeout=1)
        print('NET OPEN', host)
    except OSError:
        print('net blocked', host)
return []
""",
        "ok",
        imports="import socket",
        stdout_has=("net blocked",),
        stdout_lacks=("NET OPEN",),
    ),
    case(
        "dns_lookup",
        "isolation",
        """
try:
    socket.getaddrinfo('pypi.org', 443)
    print('DNS RESOLVED')
except OSError:
    print('dns blocked')
return []
""",
        "ok",
        imports="import socket",
        stdout_has=("dns blocked",),
        stdout_lacks=("RESOLVED",),
    ),
    case(
        "read_environment",
        "isolation",
        "print(dict(os.environ))\nreturn []",
        "ok",
        imports="import os",
        stdout_lacks=(HONEYPOT, "OPENAI"),
    ),
    case(
        "read_proc_environ",
        "isolation",
        """
for pid in (1, os.getppid()):
    for what in ('environ', 'fd', 'mem', 'maps'):
        path = f'/proc/{pid}/{what}'
        try:
            os.listdir(path) if what == 'fd' else open(path, 'rb').read(64)
            print('READ', path)
        except OSError:
            print('denied', path)
return []
""",
        "ok",
        imports="import os",
        stdout_has=("denied",),
        stdout_lacks=("READ",),
    ),
    case(
        "read_etc_shadow",
        "isolation",
        """
try:
    print('SHADOW', open('/etc/shadow').read())
except OSError:
    print('shadow denied')
return []
""",
        "ok",
        stdout_has=("shadow denied",),
        stdout_lacks=("SHADOW",),
    ),
    case(
        "docker_socket",
        "isolation",
        """
for path in ['/var/run/docker.sock', '/run/docker.sock', '/run/containerd/containerd.sock']:
    print('SOCKET FOUND' if os.path.exists(path) else 'absent', path)
return []
""",
        "ok",
        imports="import os",
        stdout_has=("absent",),
        stdout_lacks=("FOUND",),
    ),
    case(
        "write_read_only_paths",
        "isolation",
        f"""
for path in ['/{MARKER}', '/usr/{MARKER}', '/etc/passwd', '/opt/galapagos/runtime/x.py',
             '/run/galapagos/task/evaluator.py', '/proc/sys/kernel/hostname']:
    try:
        open(path, 'a').write('pwned')
        print('WROTE', path)
    except OSError:
        print('refused', path)
return []
""",
        "ok",
        stdout_has=("refused",),
        stdout_lacks=("WROTE",),
    ),
    case(
        "setuid_escalation",
        "isolation",
        """
for attempt in (lambda: os.setuid(0), lambda: os.setgid(0), lambda: os.seteuid(0)):
    try:
        attempt()
    except OSError:
        pass
for tool in ('/usr/bin/su', '/bin/su', '/usr/bin/newgrp', '/usr/bin/passwd'):
    if os.path.exists(tool):
        try:
            subprocess.run([tool, '-c', 'id'] if tool.endswith('su') else [tool],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=1)
        except (OSError, subprocess.SubprocessError):
            pass
print('uid', os.getresuid(), 'gid', os.getresgid())
return []
""",
        "ok",
        imports="import os, subprocess",
        stdout_has=("uid (61000, 61000, 61000)",),
    ),
    case(
        "symlink_and_dotdot",
        "isolation",
        """
os.symlink('/run/galapagos/task/reference.json', 'ref')
for path in ['ref', '../../run/galapagos/task/reference.json',
             f'/proc/{os.getppid()}/root/run/galapagos/task/reference.json',
             f'/proc/{os.getppid()}/cwd/reference.json']:
    try:
        print('LEAKED', open(path).read())
    except OSError:
        print('denied', path)
return []
""",
        "ok",
        imports="import os",
        stdout_has=("denied",),
        stdout_lacks=("LEAKED",),
    ),
    case(
        "list_trusted_dir",
        "isolation",
        """
try:
    print('LISTED', os.listdir('/run/galapagos'))
except OSError:
    print('trusted dir denied')
return []
""",
        "ok",
        imports="import os",
        stdout_has=("trusted dir denied",),
        stdout_lacks=("LISTED",),
    ),
    case(
        "signal_the_runner",
        "isolation",
        """
# Every root process the candidate can see (init, the zygote, the runner), by the pids /proc
# shows, and its parent unless that is its own box's init (PID 1 of its namespace, which ignores
# signals from inside: a kill that changes nothing).
targets = {os.getppid()} if os.getppid() != 1 else set()
for entry in os.listdir('/proc'):
    try:
        with open(f'/proc/{entry}/status') as f:
            uid = next(l.split()[1] for l in f if l.startswith('Uid:'))
    except (OSError, StopIteration):
        continue
    if uid != str(os.getuid()) and int(entry) != 1:
        targets.add(int(entry))
for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM):
    for pid in sorted(targets):
        try:
            os.kill(pid, sig)
            print('SIGNALLED', pid)
        except OSError:
            print('kill refused', pid)
return []
""",
        "ok",
        imports="import os, signal",
        stdout_has=("kill refused",),
        stdout_lacks=("SIGNALLED",),
    ),
    case(
        "ptrace_the_runner",
        "isolation",
        """
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.ptrace(16, os.getppid(), None, None)  # PTRACE_ATTACH
print('PTRACED' if rc == 0 else 'ptrace refused')
return []
""",
        "ok",
        imports="import ctypes, os",
        stdout_has=("ptrace refused",),
        stdout_lacks=("PTRACED",),
    ),
]

FORGERY = [
    case(
        "monkeypatch_evaluator",
        "forgery",
        """
import builtins
found = [m for m in sys.modules if 'evaluator' in m]
try:
    import evaluator
    print('IMPORTED EVALUATOR')
except ImportError:
    print('no evaluator here', found)
builtins.sum = lambda *a, **k: 10 ** 9
builtins.float = lambda *a, **k: 1e9
return []
""",
        "ok",
        imports="import sys",
        stdout_lacks=("IMPORTED",),
    ),
    case(
        "monkeypatch_numpy",
        "forgery",
        """
numpy.sum = lambda *a, **k: 10 ** 9
numpy.isfinite = lambda *a, **k: True
json.load = lambda *a, **k: {'best_value': 1}
return []
""",
        "ok",
        imports="import json, numpy",
    ),
    case(
        "fake_result_files",
        "forgery",
        f"""
forged = json.dumps({{'combined_score': 1e9, 'validity': 1.0}})
for path in ['result.json', '/tmp/result.json', '/tmp/{MARKER}.json', 'metrics.json',
             '/run/galapagos/result.json', '/dev/shm/result.json']:
    try:
        open(path, 'w').write(forged)
    except OSError:
        pass
return []
""",
        "ok",
        imports="import json",
    ),
    case(
        "fake_final_output",
        "forgery",
        """
from galapagos_sandbox.wire import encode_frame
doc = {'kind': 'result', 'status': 'ok', 'metrics': {'combined_score': 1e9}, 'artifacts': {}}
print(json.dumps(doc))
print(json.dumps({'combined_score': 1e9}))
sys.stdout.flush()
os.write(1, encode_frame(doc))
os.write(2, encode_frame(doc))
return []
""",
        "ok",
        imports="import json, os, sys",
    ),
    case(
        "forge_answer_frames_on_every_fd",
        "forgery",
        """
from galapagos_sandbox.wire import encode_frame
frame = encode_frame({'ok': True, 'value': list(range(len(weights)))})
result = encode_frame({'kind': 'result', 'status': 'ok', 'metrics': {'combined_score': 1e9}})
for fd in range(0, 64):
    for data in (frame, result):
        try:
            os.write(fd, data)
        except OSError:
            pass
return []
""",
        "ok invalid",
        imports="import os",
    ),
    case(
        "reuse_runner_objects_from_memory",
        "forgery",
        """
import gc
emitted = []
for obj in gc.get_objects():
    if type(obj).__name__ == 'Runner' and hasattr(obj, 'emit'):
        try:
            obj._emitted = False
            emitted.append(obj.emit({'status': 'ok', 'metrics': {'combined_score': 1e9},
                                     'artifacts': {}}))
        except Exception as exc:
            emitted.append(repr(exc))
print('runner objects tried:', emitted)
return []
""",
        "ok",
    ),
    case("exit_zero_during_call", "forgery", "os._exit(0)", "crash", imports="import os"),
    case(
        "exit_zero_at_import",
        "forgery",
        "return []",
        "crash",
        imports="import sys",
        top="sys.exit(0)",
    ),
    case(
        "lying_eq_object",
        "forgery",
        """
class Everything(list):
    def __eq__(self, other):
        return True
    def __len__(self):
        return 0
return Everything([0, 1, 2])
""",
        "invalid",
    ),
    case(
        "lying_int_subclass",
        "forgery",
        """
class Index(int):
    def __eq__(self, other):
        return True
    def __hash__(self):
        return 0
    def __lt__(self, other):
        return False
return [Index(i) for i in range(len(weights))]
""",
        "invalid",
    ),
    case(
        "read_reference_from_disk",
        "forgery",
        """
hits = []
for root, dirs, files in os.walk('/', onerror=lambda e: None):
    if root.startswith(('/proc', '/sys')):
        dirs[:] = []
        continue
    if 'reference.json' in files or 'items.json' in files:
        hits.append(root)
print('FOUND' if hits else 'reference not found', hits)
return []
""",
        "ok",
        imports="import os",
        stdout_has=("reference not found",),
        stdout_lacks=("FOUND",),
    ),
    case(
        "module_shadowing",
        "forgery",
        """
payload = "raise SystemExit('shadowed')\\n"
for directory in ['.', '/tmp', os.path.expanduser('~')]:
    for name in ['numpy.py', 'sitecustomize.py', 'usercustomize.py', 'json.py', 'evaluator.py',
                 'galapagos_sandbox.py']:
        try:
            open(os.path.join(directory, name), 'w').write(payload)
        except OSError:
            pass
return []
""",
        "ok",
        imports="import os",
    ),
    case(
        "fake_timers",
        "forgery",
        """
time.time = lambda: 0.0
time.monotonic = lambda: 0.0
time.perf_counter = lambda: 0.0
while True:
    pass
""",
        "timeout",
        imports="import time",
    ),
]

ROBUSTNESS = [
    case(
        "invalid_utf8_and_nul_output",
        "robustness",
        """
sys.stdout.buffer.write(b'\\xff\\xfe\\x00 nul \\x80\\xc3\\n')
sys.stderr.buffer.write(b'\\x00\\xff\\xfe\\n')
sys.stdout.flush()
raise ValueError('bad \\udcff \\x00 message')
""",
        "crash",
        imports="import sys",
    ),
    case(
        "rename_processes",
        "robustness",
        """
libc = ctypes.CDLL(None)
for _ in range(3):
    if os.fork() == 0:
        libc.prctl(15, b'dockerd', 0, 0, 0)
        time.sleep(3600)
libc.prctl(15, b'containerd', 0, 0, 0)
try:
    with open('/proc/self/comm', 'w') as f:
        f.write('runc')
except OSError:
    pass  # not even its own /proc entry is writable (non-dumpable after the uid change)
time.sleep(3600)
""",
        "timeout",
        imports="import ctypes, os, time",
    ),
    case(
        "detached_daemon",
        "robustness",
        """
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
    os._exit(0)
return []
""",
        "ok",
        imports="import os, signal, time",
    ),
    case("huge_exception_message", "robustness", "raise ValueError('x' * 10_000_000)", "crash"),
]

CASES = RESOURCE + ISOLATION + FORGERY + ROBUSTNESS
