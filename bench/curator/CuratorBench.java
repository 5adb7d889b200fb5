import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The Apache Curator baseline of the benchmark: InterProcessMutex driven by the same line protocol as
 * bench/workers/lock-worker.ts (see bench/support/protocol.ts). One command per stdin line,
 * `name key=value ...`; one JSON line per answer on stdout. Exits at `quit` or when stdin closes, so
 * it never outlives the benchmark.
 */
public final class CuratorBench {
  private static CuratorFramework client;
  /** Every session this JVM opened (`connect` with several connect strings); `client` is the first. */
  private static final List<CuratorFramework> clients = new ArrayList<>();
  /** What `hold` took: released by `releaseAll`, each lock by the thread that took it (InterProcessMutex is owned by a thread). */
  private static Holding holding;
  private static final Map<String, InterProcessMutex> mutexes = new HashMap<>();
  private static final Map<String, InterProcessReadWriteLock> rwLocks = new HashMap<>();
  private static final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      line = line.trim();
      if (line.isEmpty()) continue;
      String[] words = line.split(" ");
      Map<String, String> opts = new HashMap<>();
      for (int i = 1; i < words.length; i++) {
        int eq = words[i].indexOf('=');
        opts.put(words[i].substring(0, eq), words[i].substring(eq + 1));
      }
      try {
        switch (words[0]) {
          case "connect" -> connect(opts);
          case "uncontended" -> uncontended(opts);
          case "contend" -> contend(opts);
          case "hold" -> hold(opts);
          case "releaseAll" -> releaseAll();
          case "drain" -> drain(opts);
          case "quit" -> {
            quit();
            return;
          }
          default -> out.println("{\"error\":\"unknown command " + words[0] + "\"}");
        }
      } catch (Throwable error) {
        out.println("{\"error\":" + quote(String.valueOf(error)) + "}");
      }
    }
    quit();
  }

  /**
   * One session, or with several connect strings separated by `|` one session each (`contend` then
   * gives caller thread t session t mod k): many sessions in one JVM, where a JVM per session is
   * too heavy for the machine.
   */
  private static void connect(Map<String, String> opts) throws Exception {
    StringBuilder ids = new StringBuilder();
    for (String connect : opts.get("connect").split("\\|")) {
      CuratorFramework c = CuratorFrameworkFactory.builder()
          .connectString(connect)
          .sessionTimeoutMs(Integer.parseInt(opts.get("sessionTimeoutMs")))
          .connectionTimeoutMs(10_000)
          .retryPolicy(new ExponentialBackoffRetry(100, 3))
          .build();
      c.start();
      if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("no connection to " + connect + " in 20 s");
      clients.add(c);
      if (ids.length() > 0) ids.append(',');
      ids.append('"').append(Long.toHexString(c.getZookeeperClient().getZooKeeper().getSessionId())).append('"');
    }
    client = clients.get(0);
    String first = ids.substring(0, ids.indexOf(",") < 0 ? ids.length() : ids.indexOf(","));
    out.println("{\"ok\":true,\"sessionId\":" + first + ",\"sessionIds\":[" + ids + "]}");
  }

  private static InterProcessMutex mutex(String path) {
    return mutexes.computeIfAbsent(path, p -> new InterProcessMutex(client, p));
  }

  /** `cycles` acquire+release on one free lock; every cycle's latency in ns. */
  private static void uncontended(Map<String, String> opts) throws Exception {
    InterProcessMutex lock = mutex(opts.get("path"));
    int cycles = Integer.parseInt(opts.get("cycles"));
    long[] latencies = new long[cycles];
    long cpu = processCpuNs();
    long start = System.nanoTime();
    for (int i = 0; i < cycles; i++) {
      long t0 = System.nanoTime();
      lock.acquire();
      lock.release();
      latencies[i] = System.nanoTime() - t0;
    }
    long elapsed = System.nanoTime() - start;
    cpu = processCpuNs() - cpu;
    StringBuilder json = new StringBuilder("{\"cycles\":").append(cycles).append(",\"elapsedNs\":").append(elapsed);
    json.append(",\"cpuNs\":").append(cpu);
    appendArray(json.append(",\"latenciesNs\":"), latencies, cycles);
    out.println(json.append('}'));
  }

  /**
   * `callers` threads (one shared InterProcessMutex, as an application shares one per lock, or with
   * `mutexes=own` one each) loop
   * acquire+release on one lock from wall-clock `startAt` for `durationMs`. A cycle counts when its
   * release completed inside the window; `waitsNs` are acquire latencies of counted cycles.
   */
  private static void contend(Map<String, String> opts) throws Exception {
    String path = opts.get("path");
    boolean own = "own".equals(opts.get("mutexes"));
    int callers = Integer.parseInt(opts.get("callers"));
    long startAt = Long.parseLong(opts.get("startAt"));
    long durationMs = Long.parseLong(opts.get("durationMs"));
    // Optional: the read/write lock with this share of reads, and a hold time per operation.
    int readPercent = opts.containsKey("readPercent") ? Integer.parseInt(opts.get("readPercent")) : -1;
    long holdMs = opts.containsKey("holdMs") ? Long.parseLong(opts.get("holdMs")) : 0;
    InterProcessReadWriteLock rw = readPercent < 0 ? null : rwLocks.computeIfAbsent(path, p -> new InterProcessReadWriteLock(client, p));
    long wait = startAt - System.currentTimeMillis();
    if (wait > 0) Thread.sleep(wait);
    long windowStart = System.nanoTime();
    long windowEnd = windowStart + durationMs * 1_000_000L;
    List<long[]> perThread = new ArrayList<>();
    int[] counts = new int[callers];
    int[] all = new int[callers];
    Workers workers = new Workers();
    for (int t = 0; t < callers; t++) {
      long[] waits = new long[1 << 16];
      perThread.add(waits);
      int index = t;
      CuratorFramework session = clients.get(t % clients.size());
      InterProcessMutex mutex = rw != null ? null : own || clients.size() > 1 ? new InterProcessMutex(session, path) : mutex(path);
      long[] seed = { 1 + t * 7919L + ProcessHandle.current().pid() };
      workers.start(() -> {
        int n = 0;
        while (System.nanoTime() < windowEnd) {
          InterProcessLock lock = mutex;
          if (rw != null) {
            seed[0] = (seed[0] * 1103515245L + 12345L) % 2147483648L;
            lock = (seed[0] / 2147483648.0) * 100 < readPercent ? rw.readLock() : rw.writeLock();
          }
          long t0 = System.nanoTime();
          lock.acquire();
          long t1 = System.nanoTime();
          if (holdMs > 0) Thread.sleep(holdMs);
          lock.release();
          all[index] += 1;
          if (System.nanoTime() <= windowEnd && n < waits.length) waits[n++] = t1 - t0;
        }
        counts[index] = n;
      });
    }
    workers.joinAll();
    int total = 0;
    int allCycles = 0;
    for (int t = 0; t < callers; t++) {
      total += counts[t];
      allCycles += all[t];
    }
    long[] waits = new long[total];
    int k = 0;
    for (int t = 0; t < callers; t++) {
      System.arraycopy(perThread.get(t), 0, waits, k, counts[t]);
      k += counts[t];
    }
    StringBuilder json = new StringBuilder("{\"cycles\":").append(total).append(",\"allCycles\":").append(allCycles);
    json.append(",\"windowNs\":").append(windowEnd - windowStart);
    appendArray(json.append(",\"waitsNs\":"), waits, total);
    if (clients.size() > 1) {
      long[] perSession = new long[clients.size()];
      for (int t = 0; t < callers; t++) perSession[t % clients.size()] += counts[t];
      appendArray(json.append(",\"perSession\":"), perSession, perSession.length);
    }
    out.println(json.append('}'));
  }

  /** Locks taken by `hold`, each thread keeping its share until `releaseAll`. */
  private record Holding(CountDownLatch go, CountDownLatch released, long[] releaseStartNs, Throwable[] failure) {}

  /**
   * Takes `count` distinct locks (`path` itself when count is 1, else `path-0` ... `path-(count-1)`),
   * each an InterProcessMutex, on at most 64 threads (each takes its share one after the other; a
   * mutex is released by the thread that took it), and keeps them until `releaseAll`. Answers the
   * time to take all, and the heap used after full collections before and after.
   */
  private static void hold(Map<String, String> opts) throws Exception {
    if (holding != null) throw new IllegalStateException("already holding: releaseAll first");
    String path = opts.get("path");
    int count = Integer.parseInt(opts.get("count"));
    boolean measureHeap = "1".equals(opts.get("gc"));
    int threads = Math.min(64, count);
    long heapBefore = measureHeap ? heapUsed() : 0;
    CountDownLatch taken = new CountDownLatch(threads);
    Holding h = new Holding(new CountDownLatch(1), new CountDownLatch(threads), new long[1], new Throwable[1]);
    long t0 = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      int first = t;
      Thread thread = new Thread(() -> {
        List<InterProcessMutex> mine = new ArrayList<>();
        try {
          for (int i = first; i < count; i += threads) {
            InterProcessMutex m = new InterProcessMutex(client, count == 1 ? path : path + "-" + i);
            m.acquire();
            mine.add(m);
          }
        } catch (Throwable error) {
          synchronized (h.failure()) {
            h.failure()[0] = error;
          }
        }
        taken.countDown();
        try {
          h.go().await();
          for (InterProcessMutex m : mine) m.release();
        } catch (Throwable error) {
          synchronized (h.failure()) {
            h.failure()[0] = error;
          }
        }
        h.released().countDown();
      });
      thread.setDaemon(true);
      thread.start();
    }
    taken.await();
    long takeNs = System.nanoTime() - t0;
    holding = h;
    if (h.failure()[0] != null) throw new RuntimeException(h.failure()[0]);
    long heapAfter = measureHeap ? heapUsed() : 0;
    out.println("{\"takeMs\":" + takeNs / 1e6 + ",\"heapBeforeBytes\":" + heapBefore + ",\"heapAfterBytes\":" + heapAfter + "}");
  }

  /** Releases what `hold` took; answers the time, and when it started on the monotonic clock (µs, as Node's hrtime). */
  private static void releaseAll() throws Exception {
    Holding h = holding;
    if (h == null) throw new IllegalStateException("nothing held");
    holding = null;
    long t0 = System.nanoTime();
    h.go().countDown();
    h.released().await();
    long releaseNs = System.nanoTime() - t0;
    if (h.failure()[0] != null) throw new RuntimeException(h.failure()[0]);
    out.println("{\"releaseMs\":" + releaseNs / 1e6 + ",\"releaseStartUs\":" + t0 / 1e3 + "}");
  }

  /**
   * `callers` threads each take the lock at `path` once (a mutex of its own: one watch on its
   * predecessor, as our waiters) and release it at once. Answers each grant's and each release's
   * instant on the monotonic clock, µs (System.nanoTime and Node's process.hrtime both read
   * CLOCK_MONOTONIC on Linux, so instants from different processes compare).
   */
  private static void drain(Map<String, String> opts) throws Exception {
    String path = opts.get("path");
    int callers = Integer.parseInt(opts.get("callers"));
    double[] grants = new double[callers];
    double[] releases = new double[callers];
    Workers workers = new Workers();
    for (int t = 0; t < callers; t++) {
      int index = t;
      InterProcessMutex mutex = new InterProcessMutex(client, path);
      workers.start(() -> {
        mutex.acquire();
        grants[index] = System.nanoTime() / 1e3;
        releases[index] = System.nanoTime() / 1e3;
        mutex.release();
      });
    }
    workers.joinAll();
    StringBuilder json = new StringBuilder("{\"grantsUs\":");
    appendDoubles(json, grants);
    appendDoubles(json.append(",\"releasesUs\":"), releases);
    out.println(json.append('}'));
  }

  /** Heap in use after full collections, bytes. */
  private static long heapUsed() {
    for (int i = 0; i < 4; i++) System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static void appendDoubles(StringBuilder json, double[] values) {
    json.append('[');
    for (int i = 0; i < values.length; i++) {
      if (i > 0) json.append(',');
      json.append(String.format(java.util.Locale.ROOT, "%.3f", values[i]));
    }
    json.append(']');
  }

  /** CPU time of the whole JVM (every thread: the client's, the JIT's, the GC's), like Node's process.cpuUsage(). */
  private static long processCpuNs() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static void quit() {
    for (CuratorFramework c : clients) c.close();
    out.println("{\"ok\":true}");
  }

  private static void appendArray(StringBuilder json, long[] values, int count) {
    json.append('[');
    for (int i = 0; i < count; i++) {
      if (i > 0) json.append(',');
      json.append(values[i]);
    }
    json.append(']');
  }

  private static String quote(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
  }

  /** What a worker thread runs. */
  private interface Body {
    void run() throws Exception;
  }

  /** Threads started one by one, joined together; the last failure is rethrown. */
  private static final class Workers {
    private final List<Thread> threads = new ArrayList<>();
    private final Throwable[] failure = new Throwable[1];

    void start(Body body) {
      Thread thread = new Thread(() -> {
        try {
          body.run();
        } catch (Throwable error) {
          synchronized (failure) {
            failure[0] = error;
          }
        }
      });
      threads.add(thread);
      thread.start();
    }

    void joinAll() throws InterruptedException {
      for (Thread thread : threads) thread.join();
      if (failure[0] != null) throw new RuntimeException(failure[0]);
    }
  }
}
