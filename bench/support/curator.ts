/**
 * The Curator baseline: checks that Debian's Curator jars are there (bench/ensure-curator.sh installs
 * them when it can), compiles bench/curator/CuratorBench.java into build/, and starts it as a
 * LineWorker. Its JVM gets the same treatment as our Node workers: its own process, a warm-up before
 * anything is measured.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LineWorker } from './children.js';

export interface CuratorSetup {
  readonly classpath: string;
  readonly version: string;
}

const JAR_DIR = process.env.CURATOR_JAR_DIR ?? '/usr/share/java';
const JARS = ['curator-recipes', 'curator-framework', 'curator-client', 'guava', 'zookeeper', 'slf4j-api', 'slf4j-nop'];

/** Returns the setup, or a reason why Curator cannot run. */
export function prepareCurator(repoRoot: string, buildDir: string): CuratorSetup | { missing: string } {
  const ensure = spawnSync('bash', [join(repoRoot, 'bench/ensure-curator.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (ensure.status !== 0) return { missing: 'Debian libcurator-recipes-java or javac is not installed (see the message above)' };
  const outDir = join(buildDir, 'bench/curator');
  mkdirSync(outDir, { recursive: true });
  const jars = JARS.map((jar) => join(JAR_DIR, `${jar}.jar`)).join(':');
  const javac = spawnSync('javac', ['-nowarn', '-d', outDir, '-cp', jars, join(repoRoot, 'bench/curator/CuratorBench.java')], {
    encoding: 'utf8',
  });
  if (javac.status !== 0) return { missing: `javac failed on bench/curator/CuratorBench.java:\n${javac.stderr}` };
  const pom = spawnSync('unzip', ['-p', join(JAR_DIR, 'curator-recipes.jar'), 'META-INF/maven/org.apache.curator/curator-recipes/pom.properties'], {
    encoding: 'utf8',
  });
  const jarVersion = /^version=(.+)$/m.exec(pom.stdout ?? '')?.[1]?.trim();
  const debVersion = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'libcurator-recipes-java'], { encoding: 'utf8' }).stdout?.trim();
  const version = [jarVersion ?? 'unknown version', debVersion ? `(Debian ${debVersion})` : ''].join(' ').trim();
  return { classpath: `${outDir}:${jars}`, version: version || 'unknown' };
}

/** JVM flags of every Curator worker: a bounded heap, otherwise the JVM's defaults (tiered JIT, G1). */
export const CURATOR_JVM_FLAGS = ['-Xmx256m'];

export function startCuratorWorker(setup: CuratorSetup, label: string): LineWorker {
  return LineWorker.start(label, 'java', [...CURATOR_JVM_FLAGS, '-cp', setup.classpath, 'CuratorBench']);
}
