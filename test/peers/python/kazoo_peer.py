"""A real kazoo peer for the polyglot tests, driven by lines on stdin; replies on stdout.

One process hosts many workers; each worker is one KazooClient (one ZooKeeper session) and runs its
commands in order on its own thread. The protocol is in test/support/peers.ts, shared with
test/peers/java/CuratorPeer.java. Run it with Debian's Python (${KAZOO_PYTHON:-/usr/bin/python3}).

Kinds: lock (kazoo Lock), curator-lock (CuratorCompatibleLock below), read (ReadLock), write
(WriteLock), semaphore (Semaphore, leases=N). Options: timeout=MS (0 = try once, not blocking),
extra=PATTERN[,PATTERN...] (extra_lock_patterns of the lock kinds), id=IDENTIFIER.
Leader election: latch / unlatch / participants (kazoo Election, at most one per worker).
"""
import sys
import threading
import time
import queue

import kazoo.version
from kazoo.client import KazooClient
from kazoo.exceptions import CancelledError, LockTimeout, NodeExistsError, NoNodeError
from kazoo.recipe.lock import Lock, ReadLock, Semaphore, WriteLock

REVOKE_MESSAGE = b"__REVOKE__"  # what Curator's Revoker writes (LockInternals.REVOKE_MESSAGE)


class CuratorCompatibleLock(Lock):
    """A kazoo Lock whose nodes Curator's InterProcessMutex sorts right: `<hex>-lock-<seq>`.

    Curator sorts every child by the text after its last `lock-`; kazoo's own name `__lock__` has
    none, so Curator would sort kazoo's nodes by their whole name, after all of its own. With
    `-lock-` both sides read the sequence, and kazoo's pattern matches Curator's
    `_c_<uuid>-lock-<seq>` too.
    """

    _NODE_NAME = "-lock-"
    _EXCLUDE_NAMES = ["-lock-"]


LOCK_KINDS = {"lock": Lock, "curator-lock": CuratorCompatibleLock, "read": ReadLock, "write": WriteLock}

_out = threading.Lock()


def say(line):
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def describe(error):
    return " ".join(("%s: %s" % (type(error).__name__, str(error) or repr(error.args))).split())


class Worker(object):
    def __init__(self, name, connect_string, options):
        self.name = name
        self.client = KazooClient(hosts=connect_string, timeout=int(options.get("session", "4000")) / 1000.0)
        self.tasks = queue.Queue()
        self.held = {}  # "kind path" -> (recipe, node), in acquire order; worker thread only
        self.pending = None  # the recipe an acquire is waiting on, for cancel
        self.closed = False
        self._record = None  # while an acquire runs: {"queued": bool, "last": node, "report": bool}
        self.latched = None  # the worker's Latched, from latch until unlatch; worker thread only
        self._wrap_create()
        threading.Thread(target=self._loop, daemon=True).start()

    def _wrap_create(self):
        """Sees each node this worker's recipes create: the first sequential one is its queue entry."""
        create = self.client.create

        def recording_create(path, value=b"", acl=None, ephemeral=False, sequence=False, makepath=False, include_data=False):
            created = create(path, value, acl, ephemeral, sequence, makepath, include_data)
            record = self._record
            if record is not None and ephemeral:
                node = created[0] if include_data else created
                record["last"] = node
                if sequence and not record["queued"]:
                    record["queued"] = True
                    if record["report"]:
                        self.say("QUEUED", node)
            return created

        self.client.create = recording_create

    def say(self, reply, *rest):
        if not self.closed:
            say(" ".join((reply, self.name) + rest))

    def run(self, task):
        self.tasks.put(task)

    def _loop(self):
        while True:
            task = self.tasks.get()
            try:
                task()
            except Exception as error:  # reported, never swallowed: the test reads it
                self.say("ERROR", describe(error))

    def connect(self):
        self.client.start(timeout=15)
        self.say("OK", "0x%x" % self.client.client_id[0])

    def acquire(self, kind, path, options):
        held = self.take(kind, path, options, True)
        if held is not None:
            self.say("ACQUIRED", held[1])

    def take(self, kind, path, options, report):
        """Takes one lock; None when a timeout ran out or it was cancelled."""
        key = kind + " " + path
        if key in self.held:
            raise RuntimeError("already holds " + key)
        identifier = options.get("id")
        if kind == "semaphore":
            recipe = Semaphore(self.client, path, identifier, max_leases=int(options.get("leases", "1")))
        elif kind in LOCK_KINDS:
            extra = [p for p in options.get("extra", "").split(",") if p]
            recipe = LOCK_KINDS[kind](self.client, path, identifier, extra_lock_patterns=extra)
        else:
            raise ValueError("unknown kind %s (lock, curator-lock, read, write, semaphore)" % kind)
        if "revocable" in options:
            raise ValueError("kazoo has no revocation")
        timeout = options.get("timeout")
        self._record = {"queued": False, "last": None, "report": report}
        self.pending = recipe
        try:
            if timeout is None:
                got = recipe.acquire()
            elif float(timeout) == 0:
                got = recipe.acquire(blocking=False)
            else:
                got = recipe.acquire(timeout=float(timeout) / 1000.0)
        except LockTimeout:
            got = False
        except CancelledError:
            if report:
                self.say("CANCELLED")
            return None
        finally:
            self.pending = None
            node = self._record["last"]
            self._record = None
        if not got:
            if report:
                self.say("TIMEOUT")
            return None
        self.held[key] = (recipe, node)
        return self.held[key]

    def release(self, key):
        if not self.held:
            raise RuntimeError("holds nothing")
        if key is None:
            key = list(self.held)[-1]
        if key not in self.held:
            raise RuntimeError("does not hold " + key)
        recipe, node = self.held.pop(key)
        recipe.release()
        self.say("RELEASED", node)

    def increment(self, kind, lock_path, counter_path, inside_path, n, options):
        """n times: take the lock, read-modify-write the counter, mark being inside (OVERLAP if taken)."""
        for _ in range(n):
            if self.take(kind, lock_path, options, False) is None:
                raise RuntimeError("timed out taking " + lock_path)
            key = kind + " " + lock_path
            try:
                inside = True
                try:
                    self.client.create(inside_path, ephemeral=True)
                except NodeExistsError:
                    inside = False
                    self.say("OVERLAP", inside_path)
                try:
                    value = int(self.client.get(counter_path)[0].decode("utf-8").strip())
                    time.sleep(0.002)  # widen the window a missing exclusion would show in
                    self.client.set(counter_path, str(value + 1).encode("utf-8"))
                except NoNodeError:
                    self.client.create(counter_path, b"1", makepath=True)
                if inside:
                    self.client.delete(inside_path)
            finally:
                recipe, _ = self.held.pop(key)
                recipe.release()
        self.say("DONE", str(n))

    def latch(self, path, options):
        """Runs a kazoo Election on `path` (identifier: id=) in a thread; QUEUED once its node exists.
        Its leader function creates inside= (if given), says LEADER, waits for unlatch, says NOT-LEADER."""
        if self.latched is not None:
            raise RuntimeError("already latched on " + self.latched.path)
        latched = Latched(self, path, options.get("id"), options.get("inside"))
        self.latched = latched
        latched.thread.start()
        # run() creates the node on its thread: wait for the Lock's node, bounded.
        deadline = time.monotonic() + 15
        while latched.election.lock.node is None:
            if not latched.thread.is_alive():
                raise RuntimeError("the election ended before its node existed")
            if time.monotonic() > deadline:
                raise RuntimeError("no election node within 15 s")
            time.sleep(0.002)
        latched.queued()

    def unlatch(self):
        """Deletes inside= (if this election created it and it is still this session's), cancels the
        election and ends the leader function (a leader says NOT-LEADER), waits for run() to return
        (the node is deleted by then), then says UNLATCHED."""
        latched = self.latched
        if latched is None:
            raise RuntimeError("not latched")
        self.latched = None
        latched.leave_inside()
        latched.election.cancel()
        latched.stop.set()
        latched.thread.join(15)
        if latched.thread.is_alive():
            raise RuntimeError("the election on %s did not end within 15 s" % latched.path)
        self.say("UNLATCHED")

    def participants(self, path):
        """The identifiers of a fresh Election's contenders() on `path`, in its order: leader first.
        (kazoo's contenders() creates a missing path, as persistent nodes.)"""
        contenders = self.client.Election(path).contenders()
        self.say("PARTICIPANTS", ",".join(escape_id(c) for c in contenders))

    def revoke(self, node_path):
        """What Curator's Revoker.attemptRevoke does: write __REVOKE__ to the node; NoNode ignored."""
        try:
            self.client.set(node_path, REVOKE_MESSAGE)
        except NoNodeError:
            pass
        self.say("REVOKE-SENT", node_path)

    def cancel(self):
        recipe = self.pending
        if recipe is not None:
            recipe.cancel()

    def close(self):
        self.closed = True
        self.cancel()
        if self.latched is not None:
            self.latched.election.cancel()  # a waiting contender stops; a leader's function keeps waiting
        self.client.stop()
        self.client.close()


class Latched(object):
    """A worker's kazoo Election, the thread its run() blocks, and the inside= node its leadership creates."""

    def __init__(self, worker, path, identifier, inside):
        self.worker = worker
        self.path = path
        self.inside = inside
        self.election = worker.client.Election(path, identifier)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self._guard = threading.Lock()
        self._queued_said = False
        self._inside_created = False
        self._leaving = False

    def queued(self):
        """QUEUED, once: from latch, or from the leader function if that comes first."""
        with self._guard:
            if self._queued_said:
                return
            self._queued_said = True
            self.worker.say("QUEUED", self.path + "/" + self.election.lock.node)

    def _run(self):
        try:
            self.election.run(self._lead)
        except Exception as error:  # reported, never swallowed: the test reads it
            self.worker.say("ERROR", describe(error))

    def _lead(self):
        self.queued()
        with self._guard:
            if self.inside is not None and not self._leaving:
                client = self.worker.client
                try:
                    client.create(self.inside, ephemeral=True)
                    self._inside_created = True
                except NodeExistsError:
                    stat = client.exists(self.inside)
                    if stat is not None and stat.ephemeralOwner == client.client_id[0]:
                        self._inside_created = True  # ours still
                    else:
                        self.worker.say("OVERLAP", self.inside)
        self.worker.say("LEADER")
        self.stop.wait()
        self.worker.say("NOT-LEADER")

    def leave_inside(self):
        """Deletes inside= if this election created it and it is still this session's."""
        with self._guard:
            self._leaving = True
            if not self._inside_created:
                return
            self._inside_created = False
            client = self.worker.client
            stat = client.exists(self.inside)
            if stat is None or stat.ephemeralOwner != client.client_id[0]:
                return
            try:
                client.delete(self.inside, version=stat.version)
            except NoNodeError:
                pass


def escape_id(identifier):
    """An id as one word of a comma-separated list: %, comma, spaces and control characters as %XX."""
    return "".join("%%%02X" % ord(c) if ord(c) <= 0x20 or ord(c) == 0x7F or c in "%," else c for c in identifier)


def options_of(words):
    options = {}
    for word in words:
        if "=" not in word:
            raise ValueError("option without '=': " + word)
        key, value = word.split("=", 1)
        options[key] = value
    return options


def need(words, count, usage):
    if len(words) < count:
        raise ValueError("usage: " + usage)


def main():
    workers = {}

    def worker(name):
        if name not in workers:
            raise ValueError("no worker %s (send new first)" % name)
        return workers[name]

    say("READY kazoo " + kazoo.version.__version__)
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "quit":
            break
        try:
            if w[0] == "new":
                need(w, 3, "new <worker> <connectString> [session=MS]")
                if w[1] in workers:
                    raise ValueError("worker exists")
                workers[w[1]] = created = Worker(w[1], w[2], options_of(w[3:]))
                created.run(created.connect)
            elif w[0] == "acquire":
                need(w, 4, "acquire <worker> <kind> <path> [options]")
                target = worker(w[1])
                target.run(lambda t=target, w=w: t.acquire(w[2], w[3], options_of(w[4:])))
            elif w[0] == "release":
                target = worker(w[1])
                key = w[2] + " " + w[3] if len(w) >= 4 else None
                target.run(lambda t=target, k=key: t.release(k))
            elif w[0] == "increment":
                need(w, 7, "increment <worker> <kind> <lockPath> <counterPath> <insidePath> <n> [options]")
                target = worker(w[1])
                target.run(lambda t=target, w=w: t.increment(w[2], w[3], w[4], w[5], int(w[6]), options_of(w[7:])))
            elif w[0] == "revoke":
                need(w, 3, "revoke <worker> <nodePath>")
                target = worker(w[1])
                threading.Thread(target=lambda t=target, p=w[2]: _guard(t, lambda: t.revoke(p)), daemon=True).start()
            elif w[0] == "latch":
                need(w, 3, "latch <worker> <path> [id=X] [inside=P]")
                target = worker(w[1])
                target.run(lambda t=target, w=w: t.latch(w[2], options_of(w[3:])))
            elif w[0] == "unlatch":
                target = worker(w[1])
                target.run(target.unlatch)
            elif w[0] == "participants":
                need(w, 3, "participants <worker> <path>")
                target = worker(w[1])
                target.run(lambda t=target, p=w[2]: t.participants(p))
            elif w[0] == "cancel":
                worker(w[1]).cancel()
            elif w[0] == "close":
                target = workers.pop(w[1], None) or worker(w[1])
                threading.Thread(target=lambda t=target: (t.close(), say("CLOSED " + t.name)), daemon=True).start()
            else:
                raise ValueError("unknown command " + w[0])
        except Exception as error:
            say("ERROR %s %s" % (w[1] if len(w) > 1 else "-", describe(error)))
    # quit, or stdin closed because the test process went away: end every session, then exit.
    for target in workers.values():
        target.close()
    say("BYE")


def _guard(target, task):
    try:
        task()
    except Exception as error:
        target.say("ERROR", describe(error))


if __name__ == "__main__":
    main()
