import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

  private static void connect(Map<String, String> opts) throws Exception {
    client = CuratorFrameworkFactory.builder()
        .connectString(opts.get("connect"))
        .sessionTimeoutMs(Integer.parseInt(opts.get("sessionTimeoutMs")))
        .connectionTimeoutMs(10_000)
        .retryPolicy(new ExponentialBackoffRetry(100, 3))
        .build();
    client.start();
    if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("no connection in 20 s");
    long session = client.getZookeeperClient().getZooKeeper().getSessionId();
    out.println("{\"ok\":true,\"sessionId\":\"" + Long.toHexString(session) + "\"}");
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
    Thread[] threads = new Thread[callers];
    Throwable[] failure = new Throwable[1];
    for (int t = 0; t < callers; t++) {
      long[] waits = new long[1 << 16];
      perThread.add(waits);
      int index = t;
      InterProcessMutex mutex = rw != null ? null : own ? new InterProcessMutex(client, path) : mutex(path);
      long[] seed = { 1 + t * 7919L + ProcessHandle.current().pid() };
      threads[t] = new Thread(() -> {
        try {
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
        } catch (Throwable error) {
          synchronized (failure) {
            failure[0] = error;
          }
        }
      });
      threads[t].start();
    }
    for (Thread thread : threads) thread.join();
    if (failure[0] != null) throw new RuntimeException(failure[0]);
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
    out.println(json.append('}'));
  }

  /** CPU time of the whole JVM (every thread: the client's, the JIT's, the GC's), like Node's process.cpuUsage(). */
  private static long processCpuNs() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static void quit() {
    if (client != null) client.close();
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
}
