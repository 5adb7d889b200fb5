/**
 * The bookkeeping every test server shares: where Java and the jar are, the data directories, and the
 * guarantee that no server outlives the test process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { CLOSE_INHERITED_FDS, canCloseInheritedFds } from './isolated-spawn.js';
import { ZooKeeperNotInstalledError } from './testing-errors.js';

/** Debian's `zookeeper` package puts the server jar here. */
export const DEFAULT_ZK_JAR = '/usr/share/java/zookeeper.jar';

/** The server jar (or class path) used when no `jarPath` option is given: ZK_JAR, else Debian's. */
export const ZK_JAR = process.env.ZK_JAR ?? DEFAULT_ZK_JAR;

/** Options naming the programs a test server runs. */
export interface ZkInstallOptions {
  /**
   * The ZooKeeper server jar, or a class path (`/opt/zookeeper/lib/*` works too).
   * @default process.env.ZK_JAR, else '/usr/share/java/zookeeper.jar' (Debian's zookeeper package)
   */
  jarPath?: string;
  /**
   * The `java` executable: a path, or a name looked up in PATH.
   * @default process.env.JAVA, else 'java'
   */
  javaPath?: string;
}

/** The jar and java a server will run, checked: throws ZooKeeperNotInstalledError naming what is missing. */
export function resolveInstall(options: ZkInstallOptions = {}): { jar: string; java: string } {
  const jar = options.jarPath ?? ZK_JAR;
  // A class path with a wildcard names a directory of jars.
  const jarToCheck = jar.includes('*') ? dirname(jar) : jar;
  if (!existsSync(jarToCheck)) throw new ZooKeeperNotInstalledError('jar', jar);
  const javaName = options.javaPath ?? process.env.JAVA ?? 'java';
  const java = findExecutable(javaName);
  if (!java) throw new ZooKeeperNotInstalledError('java', javaName.includes('/') ? javaName : `${javaName} in PATH`);
  return { jar, java };
}

/**
 * Throws ZooKeeperNotInstalledError, saying how to install, unless Java and the server jar are
 * there. Call it in a `beforeAll` to fail early with a clear message.
 */
export function assertZooKeeperInstalled(options: ZkInstallOptions = {}): void {
  resolveInstall(options);
}

function findExecutable(name: string): string | undefined {
  const candidates = isAbsolute(name) || name.includes('/') ? [name] : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not this one: try the next PATH entry
    }
  }
  return undefined;
}

const running = new Set<ChildProcess>();
const dataDirs: string[] = [];
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  if (process.env.ZK_KEEP_DATA) return;
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Registers a started server: killed when this process exits, and by a small watchdog when this
 * process dies by a signal (which runs no 'exit' handler). Resolves when the server has exited.
 */
export function track(child: ChildProcess): Promise<void> {
  running.add(child);
  if (child.pid) {
    const closeInherited = canCloseInheritedFds() ? `${CLOSE_INHERITED_FDS}; ` : '';
    const script = `${closeInherited}while kill -0 ${process.pid} 2>/dev/null && kill -0 ${child.pid} 2>/dev/null; do sleep 1; done; kill -9 ${child.pid} 2>/dev/null`;
    const watchdog = spawn('bash', ['-c', script], { stdio: 'ignore', detached: true });
    // Without bash (Windows) there is no watchdog; the 'exit' handler still kills the server.
    watchdog.on('error', () => undefined);
    watchdog.unref();
  }
  return new Promise((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
}

/** A fresh data directory under `parent`, removed at process exit (unless ZK_KEEP_DATA is set). */
export function makeDataDir(parent = tmpdir()): string {
  const base = join(parent, 'nestjs-zk-lock-tests');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'zk-'));
  dataDirs.push(dir);
  return dir;
}
