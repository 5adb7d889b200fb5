import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService, ZkLockModule } from '../../lib/index.js';
import { ZkLockHealthIndicator } from '../../lib/health/index.js';
import { ZkLockViewModule } from '../../lib/live-view/index.js';
import type { LockViewData } from '../../lib/live-view/view-model.js';
import { runCli } from '../support/cli-run.js';
import { eventually, uniqueRoot } from '../support/zk-fixtures.js';
import { startZkEnsemble, type ZkEnsemble } from '../support/zk-server.js';

// The test ensemble's syncLimit × tickTime is 1 s: a 1.5 s lease margin covers a failover.
const SESSION = { sessionTimeoutMs: 4000, leaseMarginMs: 1500 } as const;

describe('the live view, inspect and the health check name the member connected to and the members in use (3-member ensemble)', () => {
  let ensemble: ZkEnsemble;
  let application: INestApplication;
  let locks: LockService;
  let health: ZkLockHealthIndicator;
  const rootPath = uniqueRoot('ensemble-view');
  beforeAll(async () => {
    ensemble = await startZkEnsemble(3);
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: ensemble.connectString, rootPath, ...SESSION }), ZkLockViewModule.register({})],
    }).compile();
    application = moduleRef.createNestApplication({ logger: false });
    await application.listen(0, '127.0.0.1');
    locks = application.get(LockService);
    health = new ZkLockHealthIndicator(locks, new HealthIndicatorService());
  });
  afterAll(async () => {
    await application?.close();
    await ensemble?.stop();
  });

  const members = (): string[] => ensemble.servers.map((server) => server.connectString);
  const viewData = async (): Promise<LockViewData> => (await fetch(`${await application.getUrl()}/zk-locks/data`)).json() as Promise<LockViewData>;

  it('each says which member serves the session, and follows it to another member when that one stops', async () => {
    const first = locks.sessionInfo();
    expect(members()).toContain(first.server);
    expect(first.members).toEqual(members());
    expect(health.isHealthy().zookeeper).toMatchObject({ status: 'up', server: first.server, members: members() });
    expect(await viewData()).toMatchObject({ server: first.server, members: members() });

    const serving = ensemble.servers.find((server) => server.connectString === first.server)!;
    await serving.stop();
    try {
      const moved = await eventually(() => {
        const info = locks.sessionInfo();
        return info.state === 'connected' && info.server !== undefined && info.server !== first.server ? info : undefined;
      }, { what: 'the session to reconnect to another member' });
      expect(moved!.sessionId).toBe(first.sessionId);
      expect(members()).toContain(moved!.server);
      expect(health.isHealthy().zookeeper).toMatchObject({ server: moved!.server });
      expect(await viewData()).toMatchObject({ server: moved!.server, members: members() });
    } finally {
      await serving.start();
    }
  });

  it('inspect prints them in its heading and in --json', async () => {
    const json = await runCli(['inspect', '--connect', ensemble.connectString, '--root', rootPath, '--json']);
    expect(json.stderr).toBe('');
    const view = JSON.parse(json.stdout) as LockViewData;
    expect(members()).toContain(view.server);
    expect(view.members).toEqual(members());
    const text = await runCli(['inspect', '--connect', ensemble.connectString, '--root', rootPath]);
    expect(text.stdout.split('\n')[0]).toMatch(/ from 127\.0\.0\.1:\d+ \(members: 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+\)$/);
  });
});
