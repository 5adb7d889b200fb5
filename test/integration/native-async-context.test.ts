/**
 * What AsyncLocalStorage sees in the addon's callbacks: no store, whether the C client ran them from
 * the event loop (an answer) or inside a call from JavaScript (close() runs the completions of the
 * requests in flight, and emits 'close'), as with the nan binding it replaced. The library's close
 * handlers (a session replaced, a reconnection started) must not carry the store of whoever closed
 * the handle, such as a lock context.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { loadNativeModule } from '../../lib/zookeeper/native-client.js';
import { useZooKeeper } from '../support/zk-fixtures.js';

const ZCLOSING = -116;

describe('the native addon and AsyncLocalStorage', () => {
  const zk = useZooKeeper();

  it('callbacks and events see no store: not the one around the request, nor the one around close()', async () => {
    const als = new AsyncLocalStorage<string>();
    const Native = loadNativeModule();
    const config = { connect: zk.connectString, timeout: 4000, debug_level: 0, host_order_deterministic: true };
    const client = new Native(config);
    const seen: Record<string, string | undefined> = {};
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => {
        seen.connect = als.getStore();
        resolve();
      });
      const started = als.run('init', () => client.native.init(config));
      if (started instanceof Error) reject(started);
    });
    // Answered from the event loop.
    await new Promise<void>((resolve) => {
      als.run('request', () =>
        client.native.a_exists('/', false, () => {
          seen.answer = als.getStore();
          resolve();
        }),
      );
    });
    // Off the C client's stack (a close from inside one of its callbacks is completed when it
    // returns), so that close() itself runs the completion of the request in flight (ZCLOSING).
    await new Promise((resolve) => setImmediate(resolve));
    let ranInsideClose = false;
    let closing = true;
    const closed = new Promise<void>((resolve) => client.once('close', () => {
      seen.close = als.getStore();
      resolve();
    }));
    als.run('request', () =>
      client.native.a_exists('/', false, (rc) => {
        seen.closing = als.getStore();
        seen.closingRc = String(rc);
        ranInsideClose = closing;
      }),
    );
    als.run('closer', () => client.close());
    closing = false;
    await closed;
    expect(ranInsideClose).toBe(true);
    expect(seen).toEqual({ connect: undefined, answer: undefined, closing: undefined, closingRc: String(ZCLOSING), close: undefined });
  });
});
