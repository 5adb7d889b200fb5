/**
 * Before each ensemble trial, every member serving and one leading. A member slow to come back
 * after the last trial's fault (still syncing, or stuck rejoining on a loaded machine) is a set-up
 * problem, not a result: it is waited for, restarted if it does not come back, and counted, as the
 * trials count a holder that lost its lock before the fault.
 */
import type { ZkEnsemble, ZkServer } from '../support/zk-server.js';

/** How long a member may take to serve again on its own (a loaded machine's JVM catching up). */
const COME_BACK_MS = 30_000;
/** How long the ensemble may take to serve once the slow members were restarted. */
const AFTER_RESTART_MS = 60_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Each member's mode (`leader`, `follower`, or `down` when it does not answer as serving). */
async function modes(ensemble: ZkEnsemble): Promise<string[]> {
  const answers = await Promise.all(ensemble.servers.map((s) => s.fourLetter('srvr').catch(() => '')));
  return answers.map((answer) => /Mode: (leader|follower)/.exec(answer)?.[1] ?? 'down');
}

const serving = (seen: readonly string[]): boolean => seen.every((mode) => mode !== 'down') && seen.includes('leader');

async function waitServing(ensemble: ZkEnsemble, ms: number): Promise<string[]> {
  const deadline = performance.now() + ms;
  for (;;) {
    const seen = await modes(ensemble);
    if (serving(seen) || performance.now() > deadline) return seen;
    await sleep(200);
  }
}

/**
 * Waits until every member serves and one leads; restarts the members that do not within
 * COME_BACK_MS. Resolves with how many members it restarted (0: none was needed).
 * @throws Error naming each member's mode when the ensemble does not serve even after that
 */
export async function allServing(ensemble: ZkEnsemble, log: (line: string) => void = () => undefined): Promise<number> {
  let seen = await waitServing(ensemble, COME_BACK_MS);
  if (serving(seen)) return 0;
  // Without a leader, every member is suspect; otherwise only those that do not serve.
  const slow: ZkServer[] = ensemble.servers.filter((_, i) => seen[i] === 'down' || !seen.includes('leader'));
  log(`set-up: ${slow.map((s) => `zk${s.id}`).join(', ')} not serving ${COME_BACK_MS / 1000} s after the last trial (${seen.join(', ')}): restarting`);
  for (const server of slow) {
    await server.stop();
    await server.start();
  }
  seen = await waitServing(ensemble, AFTER_RESTART_MS);
  if (!serving(seen)) throw new Error(`the ensemble did not recover, even after restarting ${slow.map((s) => `zk${s.id}`).join(', ')}: ${seen.join(', ')}`);
  return slow.length;
}
