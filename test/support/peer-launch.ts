/**
 * How each real peer of test/peers is started: the Java one (Curator) compiled once per test run into
 * the run's temporary directory (test/support/run-temp-dir.ts) and run on Debian's Curator jars; the
 * Python one (kazoo) run by Debian's Python, which sees Debian's python3-kazoo. `scripts/ensure-peers.sh`
 * installs both; CURATOR_JAR_DIR and KAZOO_PYTHON point elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type PeerLanguage = 'curator' | 'kazoo';

const PEERS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../peers');
const JAR_DIR = process.env.CURATOR_JAR_DIR ?? '/usr/share/java';
const JARS = ['curator-recipes', 'curator-framework', 'curator-client', 'zookeeper', 'zookeeper-jute', 'guava', 'slf4j-api'];
const KAZOO_PYTHON = process.env.KAZOO_PYTHON ?? '/usr/bin/python3';
const MISSING = 'Run `bash scripts/ensure-peers.sh` (it installs them as root, otherwise prints the command).';

/** The command line of a peer; throws, saying what to install, when its library is missing. */
export function peerCommand(language: PeerLanguage): { command: string; args: string[] } {
  if (language === 'curator') return { command: 'java', args: ['-cp', curatorClasspath(), 'CuratorPeer'] };
  try {
    execFileSync(KAZOO_PYTHON, ['-c', 'import kazoo'], { stdio: 'ignore' });
  } catch {
    throw new Error(`${KAZOO_PYTHON} cannot import kazoo. ${MISSING}`);
  }
  return { command: KAZOO_PYTHON, args: ['-u', join(PEERS_DIR, 'python/kazoo_peer.py')] };
}

/** The class path of the Curator peer: its classes, compiled on first use in this run, and the jars. */
function curatorClasspath(): string {
  const jars = JARS.map((name) => join(JAR_DIR, `${name}.jar`));
  const missing = jars.filter((jar) => !existsSync(jar));
  if (missing.length > 0) throw new Error(`The Curator peer needs ${missing.join(', ')}. ${MISSING}`);
  const nop = join(JAR_DIR, 'slf4j-nop.jar');
  if (existsSync(nop)) jars.push(nop);
  const source = join(PEERS_DIR, 'java/CuratorPeer.java');
  // Keyed by the source, so a run outside Vitest's run directory (plain /tmp) never uses stale classes.
  const digest = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  const classes = join(tmpdir(), `curator-peer-classes-${digest}`);
  if (!existsSync(join(classes, 'CuratorPeer.class'))) {
    // Compiled aside, then renamed into place, so test files starting at once never see half a build.
    const building = mkdtempSync(join(tmpdir(), 'curator-peer-build-'));
    try {
      execFileSync('javac', ['-cp', jars.join(':'), '-d', building, source], { stdio: 'pipe' });
    } catch (error) {
      rmSync(building, { recursive: true, force: true });
      const output = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
      throw new Error(`javac failed on CuratorPeer.java (javac and the Curator jars: ${MISSING}):\n${output}`);
    }
    try {
      renameSync(building, classes);
    } catch {
      rmSync(building, { recursive: true, force: true }); // another file's build got there first
    }
  }
  return [classes, ...jars].join(':');
}
