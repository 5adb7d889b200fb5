/**
 * 100 waiters, one release at a time: how many watch notifications the server sends, and how many
 * requests it serves, per release, for our recipe and for the naive one (every waiter watches the
 * whole children list), which shows the herd ours avoids. Counts come from the server (mntr);
 * the handoff time is from the release call to the next holder's grant.
 */
import { join } from 'node:path';
import { runOnce } from '../support/children.js';
import type { BenchContext } from '../support/context.js';
import { type Check, formatNumber, type WorkloadResult } from '../support/report.js';
import { figure, percentile } from '../support/stats.js';
import type { HerdResult } from '../workers/herd-worker.js';

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

export async function runHerd(ctx: BenchContext, settings: { waiters: number; rounds: number }): Promise<WorkloadResult> {
  const script = join(ctx.buildDir, 'bench/workers/herd-worker.js');
  const recipes = ['ours', 'naive'] as const;
  const runs = new Map<string, HerdResult[]>(recipes.map((r) => [r, []]));
  for (let round = 0; round < settings.rounds; round++) {
    for (const recipe of round % 2 ? [...recipes].reverse() : recipes) {
      ctx.log(`herd: ${recipe}, round ${round + 1}/${settings.rounds}`);
      const result = await runOnce<HerdResult>(`herd-${recipe}`, script, {
        connect: ctx.server.connectString,
        port: ctx.server.clientPort,
        sessionTimeoutMs: ctx.sessionTimeoutMs,
        waiters: settings.waiters,
        recipe,
      });
      runs.get(recipe)!.push(result);
    }
  }
  const labels = { ours: 'ours: FairLock (watch the predecessor)', naive: 'naive: every waiter watches the children list' };
  const rows = recipes.map((recipe) => {
    const rs = runs.get(recipe)!;
    return {
      subject: labels[recipe],
      cells: {
        notifications: figure(rs.map((r) => mean(r.notificationsPerRelease))),
        maxNotifications: figure(rs.map((r) => Math.max(...r.notificationsPerRelease))),
        requests: figure(rs.map((r) => mean(r.requestsPerRelease))),
        requestsMedian: figure(rs.map((r) => percentile(r.requestsPerRelease, 50))),
        handoff: figure(rs.map((r) => percentile(r.handoffMs, 50))),
        handoffP99: figure(rs.map((r) => percentile(r.handoffMs, 99))),
      },
    };
  });
  const ours = runs.get('ours')!;
  const worst = Math.max(...ours.flatMap((r) => r.notificationsPerRelease));
  const fewest = Math.min(...ours.flatMap((r) => r.notificationsPerRelease));
  const checks: Check[] = [
    {
      target: `exactly 1 notification per release with ${settings.waiters} waiters`,
      measured: `${formatNumber(fewest)} to ${formatNumber(worst)} per release over ${ours.reduce((n, r) => n + r.releases, 0)} releases`,
      met: worst === 1 && fewest === 1,
    },
  ];
  return {
    id: 'herd',
    title: `${settings.waiters} waiters (${settings.waiters + 1} sessions), released one at a time`,
    columns: [
      { key: 'notifications', label: 'notifications/release', digits: 2 },
      { key: 'maxNotifications', label: 'most in one release', digits: 0 },
      { key: 'requests', label: 'requests/release (mean)', digits: 2 },
      { key: 'requestsMedian', label: 'requests/release (median)', digits: 0 },
      { key: 'handoff', label: 'handoff p50 ms', digits: 2 },
      { key: 'handoffP99', label: 'handoff p99 ms', digits: 2 },
    ],
    rows,
    checks,
    notes: [
      `${settings.rounds} run(s) per recipe, each ${settings.waiters} releases, measured one by one: a release counts until the next holder has the lock and the server's watch count is back to the recipe's steady state.`,
      'Requests per release include the releaser\'s delete; a ping from an idle session would add one (sessions ask for the longest timeout the server allows, so pings are rare).',
    ],
    details: { settings, runs: Object.fromEntries(runs) },
  };
}
