import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * A real Apache Curator peer for the polyglot tests, driven by lines on stdin; replies on stdout.
 * One process hosts many workers; each worker is one CuratorFramework (one ZooKeeper session) and
 * runs its commands in order on its own thread. The protocol is in test/support/peers.ts, shared
 * with test/peers/python/kazoo_peer.py.
 *
 * Kinds: mutex (InterProcessMutex), read / write (one InterProcessReadWriteLock per worker and path,
 * so a worker can downgrade), semaphore (InterProcessSemaphoreV2, leases=N).
 * Options: timeout=MS (0 = try once), revocable=report|release (mutex, read, write), leases=N.
 * Leader election: latch / unlatch / participants (LeaderLatch, at most one latch per worker).
 */
public final class CuratorPeer {
  private static final Map<String, Worker> WORKERS = new ConcurrentHashMap<>();
  /** For commands that must not wait behind a worker's blocked acquire (revoke). */
  private static final ExecutorService SIDE = Executors.newCachedThreadPool(CuratorPeer::daemon);

  public static void main(String[] args) throws Exception {
    say("READY curator " + curatorVersion());
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] words = line.trim().split("\\s+");
      if (words[0].isEmpty()) continue;
      if (words[0].equals("quit")) break;
      try {
        dispatch(words);
      } catch (RuntimeException e) {
        say("ERROR " + (words.length > 1 ? words[1] : "-") + " " + describe(e));
      }
    }
    // quit, or stdin closed because the test process went away: end every session, then exit.
    for (Worker worker : WORKERS.values()) worker.close();
    say("BYE");
    System.exit(0);
  }

  private static void dispatch(String[] w) {
    switch (w[0]) {
      case "new": {
        need(w, 3, "new <worker> <connectString> [session=MS]");
        Worker worker = new Worker(w[1], w[2], options(w, 3));
        if (WORKERS.putIfAbsent(w[1], worker) != null) throw new IllegalArgumentException("worker exists");
        worker.run(worker::connect);
        return;
      }
      case "acquire": {
        need(w, 4, "acquire <worker> <kind> <path> [options]");
        Worker worker = worker(w[1]);
        worker.run(() -> worker.acquire(w[2], w[3], options(w, 4)));
        return;
      }
      case "release": {
        Worker worker = worker(w[1]);
        String key = w.length >= 4 ? w[2] + " " + w[3] : null;
        worker.run(() -> worker.release(key));
        return;
      }
      case "increment": {
        need(w, 7, "increment <worker> <kind> <lockPath> <counterPath> <insidePath> <n> [options]");
        Worker worker = worker(w[1]);
        worker.run(() -> worker.increment(w[2], w[3], w[4], w[5], Integer.parseInt(w[6]), options(w, 7)));
        return;
      }
      case "revoke": {
        need(w, 3, "revoke <worker> <nodePath>");
        Worker worker = worker(w[1]);
        SIDE.execute(() -> worker.guard(() -> {
          Revoker.attemptRevoke(worker.client, w[2]);
          worker.say("REVOKE-SENT", w[2]);
        }));
        return;
      }
      case "latch": {
        need(w, 3, "latch <worker> <path> [id=X] [inside=P]");
        Worker worker = worker(w[1]);
        worker.run(() -> worker.latch(w[2], options(w, 3)));
        return;
      }
      case "unlatch": {
        Worker worker = worker(w[1]);
        worker.run(worker::unlatch);
        return;
      }
      case "participants": {
        need(w, 3, "participants <worker> <path>");
        Worker worker = worker(w[1]);
        worker.run(() -> worker.participants(w[2]));
        return;
      }
      case "cancel": worker(w[1]).cancel(); return;
      case "close": {
        Worker worker = worker(w[1]);
        WORKERS.remove(w[1]);
        SIDE.execute(() -> {
          worker.close();
          say("CLOSED " + worker.name);
        });
        return;
      }
      default: throw new IllegalArgumentException("unknown command " + w[0]);
    }
  }

  /** A held lock or lease, and the node that stands for it. */
  private record Held(String key, String node, InterProcessLock lock, InterProcessSemaphoreV2 semaphore, Lease lease) {
    void release() throws Exception {
      if (lease != null) semaphore.returnLease(lease);
      else lock.release();
    }
  }

  private interface Task { void run() throws Exception; }

  private static final class Worker {
    final String name;
    final CuratorFramework client;
    final CreateRecorder recorder = new CreateRecorder();
    final ExecutorService thread = Executors.newSingleThreadExecutor(CuratorPeer::daemon);
    /** Touched on the worker's thread only. */
    final LinkedHashMap<String, Held> held = new LinkedHashMap<>();
    final Map<String, InterProcessReadWriteLock> readWriteLocks = new HashMap<>();
    volatile Thread acquiring;
    volatile boolean closed;
    /** The worker's LeaderLatch, from latch until unlatch; touched on the worker's thread only. */
    Latched latched;

    Worker(String name, String connectString, Map<String, String> options) {
      this.name = name;
      int sessionMs = Integer.parseInt(options.getOrDefault("session", "4000"));
      this.client = CuratorFrameworkFactory.builder()
          .connectString(connectString)
          .sessionTimeoutMs(sessionMs)
          .connectionTimeoutMs(5000)
          .retryPolicy(new ExponentialBackoffRetry(100, 5))
          .zookeeperFactory((cs, timeout, watcher, readOnly) -> new RecordingZooKeeper(cs, timeout, watcher, readOnly, recorder))
          .build();
    }

    void say(String reply, String... rest) {
      if (!closed) CuratorPeer.say(reply + " " + name + (rest.length > 0 ? " " + String.join(" ", rest) : ""));
    }

    void run(Task task) { thread.execute(() -> guard(task)); }

    void guard(Task task) {
      try {
        task.run();
      } catch (Exception e) {
        say("ERROR", describe(e));
      }
    }

    void connect() throws Exception {
      client.start();
      if (!client.blockUntilConnected(15, TimeUnit.SECONDS)) throw new IllegalStateException("could not connect within 15 s");
      say("OK", "0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId()));
    }

    void acquire(String kind, String path, Map<String, String> options) throws Exception {
      Held h = take(kind, path, options, true);
      if (h != null) say("ACQUIRED", h.node);
    }

    /** Takes one lock; null when a timeout ran out. Reports QUEUED when `report`. */
    Held take(String kind, String path, Map<String, String> options, boolean report) throws Exception {
      String key = kind + " " + path;
      if (held.containsKey(key)) throw new IllegalStateException("already holds " + key);
      Long timeoutMs = options.containsKey("timeout") ? Long.parseLong(options.get("timeout")) : null;
      recorder.arm(report ? node -> say("QUEUED", node) : node -> {});
      acquiring = Thread.currentThread();
      try {
        if (kind.equals("semaphore")) {
          InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, Integer.parseInt(options.getOrDefault("leases", "1")));
          Lease lease = timeoutMs == null ? semaphore.acquire() : semaphore.acquire(timeoutMs, TimeUnit.MILLISECONDS);
          if (lease == null) return timedOut(report);
          return remember(new Held(key, recorder.lastEphemeral(), null, semaphore, lease));
        }
        InterProcessMutex lock = switch (kind) {
          case "mutex" -> new InterProcessMutex(client, path);
          case "read" -> readWriteLocks.computeIfAbsent(path, p -> new InterProcessReadWriteLock(client, p)).readLock();
          case "write" -> readWriteLocks.computeIfAbsent(path, p -> new InterProcessReadWriteLock(client, p)).writeLock();
          default -> throw new IllegalArgumentException("unknown kind " + kind + " (mutex, read, write, semaphore)");
        };
        String revocable = options.get("revocable");
        if (revocable != null) {
          lock.makeRevocable(revoked -> {
            say("REVOKE-REQUESTED", key);
            if (revocable.equals("release")) run(() -> { if (held.containsKey(key)) release(key); });
          });
        }
        if (timeoutMs == null) lock.acquire();
        else if (!lock.acquire(timeoutMs, TimeUnit.MILLISECONDS)) return timedOut(report);
        return remember(new Held(key, recorder.lastEphemeral(), lock, null, null));
      } catch (InterruptedException e) {
        say("CANCELLED");
        return null;
      } finally {
        acquiring = null;
        Thread.interrupted();
        recorder.disarm();
      }
    }

    private Held timedOut(boolean report) {
      if (report) say("TIMEOUT");
      return null;
    }

    private Held remember(Held h) {
      held.put(h.key, h);
      return h;
    }

    /** Releases `key` ("kind path"), or the lock acquired last when null. */
    void release(String key) throws Exception {
      if (held.isEmpty()) throw new IllegalStateException("holds nothing");
      Held h = key == null ? new ArrayList<>(held.values()).get(held.size() - 1) : held.get(key);
      if (h == null) throw new IllegalStateException("does not hold " + key);
      held.remove(h.key);
      h.release();
      say("RELEASED", h.node);
    }

    /** n times: take the lock, read-modify-write the counter, mark being inside (OVERLAP if taken). */
    void increment(String kind, String lockPath, String counterPath, String insidePath, int n, Map<String, String> options) throws Exception {
      for (int i = 0; i < n; i++) {
        Held h = take(kind, lockPath, options, false);
        if (h == null) throw new IllegalStateException("timed out taking " + lockPath);
        try {
          boolean inside = true;
          try {
            client.create().withMode(CreateMode.EPHEMERAL).forPath(insidePath);
          } catch (KeeperException.NodeExistsException e) {
            inside = false;
            say("OVERLAP", insidePath);
          }
          int value;
          try {
            value = Integer.parseInt(new String(client.getData().forPath(counterPath), StandardCharsets.UTF_8).trim());
            Thread.sleep(2); // widen the window a missing exclusion would show in
            client.setData().forPath(counterPath, Integer.toString(value + 1).getBytes(StandardCharsets.UTF_8));
          } catch (KeeperException.NoNodeException e) {
            client.create().creatingParentsIfNeeded().forPath(counterPath, "1".getBytes(StandardCharsets.UTF_8));
          }
          if (inside) client.delete().forPath(insidePath);
        } finally {
          held.remove(h.key);
          h.release();
        }
      }
      say("DONE", Integer.toString(n));
    }

    /**
     * Starts a LeaderLatch on `path` (data: id=, default ""); QUEUED once its node exists. Its listener
     * runs on Curator's event thread: isLeader creates inside= (if given) and says LEADER; notLeader
     * says NOT-LEADER.
     */
    void latch(String path, Map<String, String> options) throws Exception {
      if (latched != null) throw new IllegalStateException("already latched on " + latched.latch.getOurPath());
      LeaderLatch latch = new LeaderLatch(client, path, options.getOrDefault("id", ""));
      Latched l = new Latched(latch, options.get("inside"));
      latch.addListener(new LeaderLatchListener() {
        @Override public void isLeader() { guard(() -> l.lead()); }
        @Override public void notLeader() { say("NOT-LEADER"); }
      });
      latched = l;
      latch.start();
      // start() creates the node in the background: wait for getOurPath(), bounded.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (latch.getOurPath() == null) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("no latch node within 15 s");
        Thread.sleep(2);
      }
      l.queued();
    }

    /**
     * Deletes inside= (if this latch created it and it is still its own), closes the latch with
     * NOTIFY_LEADER (a leader says NOT-LEADER first), waits until the latch node is gone (Curator
     * deletes it in the background), then says UNLATCHED.
     */
    void unlatch() throws Exception {
      Latched l = latched;
      if (l == null) throw new IllegalStateException("not latched");
      latched = null;
      l.leaveInside();
      String node = l.latch.getOurPath();
      l.latch.close(LeaderLatch.CloseMode.NOTIFY_LEADER);
      if (node != null) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (client.checkExists().forPath(node) != null) {
          if (System.nanoTime() > deadline) throw new IllegalStateException("latch node " + node + " still there 15 s after close");
          Thread.sleep(2);
        }
      }
      say("UNLATCHED");
    }

    /** The ids of a fresh (unstarted) LeaderLatch's getParticipants() on `path`, in its order: leader first. */
    void participants(String path) throws Exception {
      List<String> ids = new ArrayList<>();
      for (Participant p : new LeaderLatch(client, path).getParticipants()) ids.add(escapeId(p.getId()));
      say("PARTICIPANTS", String.join(",", ids));
    }

    /** A worker's LeaderLatch and the inside= node its leadership creates. */
    final class Latched {
      final LeaderLatch latch;
      final String inside;
      private boolean queuedSaid;
      private boolean insideCreated;
      private boolean leaving;

      Latched(LeaderLatch latch, String inside) {
        this.latch = latch;
        this.inside = inside;
      }

      /** QUEUED, once: from latch(), or from isLeader if that comes first. */
      synchronized void queued() {
        if (queuedSaid) return;
        queuedSaid = true;
        say("QUEUED", latch.getOurPath());
      }

      /** isLeader: QUEUED if not said yet, inside= created (NodeExists of another session: OVERLAP), LEADER. */
      synchronized void lead() throws Exception {
        queued();
        if (inside != null && !leaving) {
          try {
            client.create().withMode(CreateMode.EPHEMERAL).forPath(inside);
            insideCreated = true;
          } catch (KeeperException.NodeExistsException e) {
            Stat stat = client.checkExists().forPath(inside);
            if (stat != null && stat.getEphemeralOwner() == sessionId()) insideCreated = true; // ours still
            else say("OVERLAP", inside);
          }
        }
        say("LEADER");
      }

      /** Deletes inside= if this latch created it and it is still this session's. */
      synchronized void leaveInside() throws Exception {
        leaving = true;
        if (!insideCreated) return;
        insideCreated = false;
        Stat stat = client.checkExists().forPath(inside);
        if (stat == null || stat.getEphemeralOwner() != sessionId()) return;
        try {
          client.delete().withVersion(stat.getVersion()).forPath(inside);
        } catch (KeeperException.NoNodeException e) {
          // gone meanwhile
        }
      }
    }

    long sessionId() throws Exception {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    void cancel() {
      Thread t = acquiring;
      if (t != null) t.interrupt();
    }

    void close() {
      closed = true;
      thread.shutdownNow();
      client.close();
    }
  }

  /** Tells a worker which ephemeral nodes its ZooKeeper handle created while an acquire runs. */
  private static final class CreateRecorder {
    private java.util.function.Consumer<String> onQueued;
    private boolean queued;
    private String lastEphemeral;

    synchronized void arm(java.util.function.Consumer<String> onQueued) {
      this.onQueued = onQueued;
      this.queued = false;
      this.lastEphemeral = null;
    }

    synchronized void disarm() { onQueued = null; }

    synchronized String lastEphemeral() { return lastEphemeral; }

    void created(String path, CreateMode mode) {
      java.util.function.Consumer<String> report = null;
      synchronized (this) {
        if (onQueued == null || !mode.isEphemeral()) return;
        lastEphemeral = path;
        if (mode.isSequential() && !queued) {
          queued = true;
          report = onQueued;
        }
      }
      if (report != null) report.accept(path);
    }
  }

  /** The ZooKeeper handle Curator uses, reporting the two create calls Curator 5 makes. */
  private static final class RecordingZooKeeper extends ZooKeeper {
    private final CreateRecorder recorder;

    RecordingZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean readOnly, CreateRecorder recorder) throws java.io.IOException {
      super(connectString, sessionTimeout, watcher, readOnly);
      this.recorder = recorder;
    }

    @Override
    public String create(String path, byte[] data, List<ACL> acl, CreateMode mode) throws KeeperException, InterruptedException {
      String created = super.create(path, data, acl, mode);
      recorder.created(created, mode);
      return created;
    }

    @Override
    public String create(String path, byte[] data, List<ACL> acl, CreateMode mode, Stat stat, long ttl) throws KeeperException, InterruptedException {
      String created = super.create(path, data, acl, mode, stat, ttl);
      recorder.created(created, mode);
      return created;
    }
  }

  private static Worker worker(String name) {
    Worker worker = WORKERS.get(name);
    if (worker == null) throw new IllegalArgumentException("no worker " + name + " (send new first)");
    return worker;
  }

  private static Map<String, String> options(String[] words, int from) {
    Map<String, String> options = new HashMap<>();
    for (int i = from; i < words.length; i++) {
      int eq = words[i].indexOf('=');
      if (eq < 0) throw new IllegalArgumentException("option without '=': " + words[i]);
      options.put(words[i].substring(0, eq), words[i].substring(eq + 1));
    }
    return options;
  }

  /** An id as one word of a comma-separated list: `%`, `,`, spaces and control characters as %XX. */
  private static String escapeId(String id) {
    StringBuilder out = new StringBuilder();
    for (char c : id.toCharArray()) {
      if (c <= 0x20 || c == 0x7f || c == '%' || c == ',') out.append(String.format("%%%02X", (int) c));
      else out.append(c);
    }
    return out.toString();
  }

  private static void need(String[] words, int count, String usage) {
    if (words.length < count) throw new IllegalArgumentException("usage: " + usage);
  }

  private static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  private static String describe(Throwable e) {
    return (e.getClass().getSimpleName() + ": " + e.getMessage()).replaceAll("\\s+", " ");
  }

  private static Thread daemon(Runnable r) {
    Thread t = new Thread(r);
    t.setDaemon(true);
    return t;
  }

  private static String curatorVersion() {
    try (InputStream in = CuratorPeer.class.getClassLoader().getResourceAsStream("META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
      Properties properties = new Properties();
      if (in != null) properties.load(in);
      return properties.getProperty("version", "unknown");
    } catch (java.io.IOException e) {
      return "unknown";
    }
  }
}
