/**
 * The addon when its environment ends with sessions open: a worker thread terminated, or exiting by
 * itself, with a connected handle, requests in flight and watches set, and the main thread exiting
 * with one open. Its cleanup hook closes the handles (no JavaScript called) and waits for libuv to
 * close their poll and timer handles, so the worker's loop closes cleanly: the process goes on,
 * and exits with its own code, without an abort or a crash.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useZooKeeper } from '../support/zk-fixtures.js';

const addon = join(fileURLToPath(new URL('../..', import.meta.url)), 'native', 'build', 'Release', 'zk_native.node');

// A connected handle with a request in flight and watches set (default watcher and aw_*), then
// `then()`; runs in a worker or in the main thread.
const openSession = `
function openSession(addon, connect, then) {
  const { ZooKeeper } = require(addon);
  const zk = new ZooKeeper();
  zk.emit = (event) => {
    if (event !== 'connect') return;
    const path = '/teardown-' + process.pid + '-' + Math.random().toString(16).slice(2);
    zk.a_create(path, 'x', 1, (rc) => {
      if (rc !== 0) throw new Error('create: ' + rc);
      zk.a_get(path, true, () => {});
      zk.aw_exists(path + '/absent', () => {}, () => {});
      zk.aw_get(path, () => {}, () => {
        for (let i = 0; i < 50; i++) zk.a_exists(path, false, () => {});
        then(zk);
      });
    });
  };
  const started = zk.init({ connect, timeout: 4000, debug_level: 0, host_order_deterministic: true });
  if (started instanceof Error) throw started;
}
`;

function runChild(script: string, connect: string) {
  return spawnSync(process.execPath, ['-e', `${openSession}\n${script}`], {
    encoding: 'utf8',
    env: { ...process.env, ADDON: addon, CONNECT: connect },
    timeout: 60_000,
  });
}

describe('the native addon when its environment ends', () => {
  const zk = useZooKeeper();

  it('a worker terminated, and a worker exiting by itself, with sessions open: the process goes on and exits cleanly', () => {
    const result = runChild(
      `
      const { Worker } = require('node:worker_threads');
      const body = openSession.toString() + \`
        const { parentPort, workerData } = require('node:worker_threads');
        openSession(workerData.addon, workerData.connect, () => {
          parentPort.postMessage('open');
          if (workerData.exitItself) setTimeout(() => process.exit(7), 20);
        });
      \`;
      function worker(exitItself) {
        return new Promise((resolve, reject) => {
          const w = new Worker(body, { eval: true, workerData: { addon: process.env.ADDON, connect: process.env.CONNECT, exitItself } });
          w.on('error', reject);
          w.on('message', () => { if (!exitItself) w.terminate(); });
          w.on('exit', resolve);
        });
      }
      (async () => {
        const codes = [];
        for (let i = 0; i < 3; i++) codes.push(await worker(false), await worker(true));
        console.log('workers ended: ' + codes.join(','));
      })().catch((e) => { console.error(e); process.exit(1); });
      `,
      zk.connectString,
    );
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('workers ended: 1,7,1,7,1,7');
    expect(result.status).toBe(0);
  });

  it('the main thread exiting with a session open exits with its code', () => {
    const result = runChild(`openSession(process.env.ADDON, process.env.CONNECT, () => { console.log('open'); process.exit(3); });`, zk.connectString);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('open');
    expect(result.status).toBe(3);
  });
});
