import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { resolveHosts } from '../../lib/zookeeper/connect-string.js';
import { EnsembleTracker } from '../../lib/zookeeper/ensemble-tracker.js';
import type { NativeClient, NativeWatcher } from '../../lib/zookeeper/native-client.js';

/** A handle whose config reads the test answers by hand. */
function fakeClient() {
  const reads: { watcher: NativeWatcher; answer: (rc: number, config: string) => void }[] = [];
  const client = Object.assign(new EventEmitter(), {
    native: {
      aw_getconfig(watcher: NativeWatcher, cb: (rc: number, msg: string, stat: unknown, data: Buffer | null) => void): number {
        reads.push({ watcher, answer: (rc, config) => cb(rc, '', {}, Buffer.from(config)) });
        return 0;
      },
    },
    close() {},
  }) as unknown as NativeClient;
  return { client, reads };
}

function tracker(configured: string, follow = true) {
  const used: string[] = [];
  let client: NativeClient | undefined;
  const t = new EnsembleTracker(configured, { get client() { return client; }, useAddresses: (resolved) => used.push(resolved.connect), resolve: (list) => resolveHosts(list) }, follow, false);
  return { t, used, setClient: (c: NativeClient) => (client = c) };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
const CONFIG = 'server.4=10.0.0.4:1:2:participant;10.0.0.4:2181\nserver.5=10.0.0.5:1:2:participant;10.0.0.5:2181\nversion=200000000';

describe('the ensemble tracker', () => {
  it('moves to the members a changed config names, chroot kept, and reads the config again after each change', async () => {
    const { t, used, setClient } = tracker('10.0.0.1:2181,10.0.0.2:2181/app');
    const { client, reads } = fakeClient();
    setClient(client);
    t.connected(client);
    t.connected(client); // a reconnect of the same handle: its watch is still set
    expect(reads).toHaveLength(1);
    reads[0]!.answer(0, CONFIG);
    await settle();
    expect(used).toEqual(['10.0.0.4:2181,10.0.0.5:2181/app']);
    expect(t.connectString).toBe('10.0.0.4:2181,10.0.0.5:2181/app');
    expect(t.configVersion).toBe('200000000');
    reads[0]!.watcher(-1, 3, ''); // a session event: the watch stays
    expect(reads).toHaveLength(1);
    reads[0]!.watcher(3, 3, '/zookeeper/config');
    expect(reads).toHaveLength(2);
    reads[1]!.answer(0, CONFIG.replace('version=200000000', 'version=200000001'));
    await settle();
    expect(used).toHaveLength(1); // same members: nothing to move
  });

  it('keeps the configured list when a member names no client address, and does not watch when turned off', async () => {
    const { t, used } = tracker('10.0.0.1:2181');
    const { client, reads } = fakeClient();
    t.connected(client);
    reads[0]!.answer(0, 'server.1=10.0.0.1:1:2:participant;10.0.0.1:2181\nserver.2=10.0.0.2:1:2:participant\nversion=1');
    await settle();
    expect(used).toEqual([]);
    expect(t.hosts).toEqual(['10.0.0.1:2181']);
    const off = tracker('10.0.0.1:2181', false);
    const other = fakeClient();
    off.t.connected(other.client);
    expect(other.reads).toHaveLength(0);
  });

  it('sets the watch again at the next connect when the read failed', () => {
    const { t } = tracker('10.0.0.1:2181');
    const { client, reads } = fakeClient();
    t.connected(client);
    reads[0]!.answer(-4, '');
    t.connected(client);
    expect(reads).toHaveLength(2);
  });
});
