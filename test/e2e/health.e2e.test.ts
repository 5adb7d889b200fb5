import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { Controller, Get, type INestApplication, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZkLockHealthIndicator } from '../../lib/health/index.js';
import { type Election, LockService, ZkLockModule } from '../../lib/index.js';
import { startLockApp } from '../support/lock-app.js';
import { eventually, STEADY_SESSION, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly zookeeper: ZkLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.zookeeper.isHealthy('zookeeper')]);
  }

  /** Both flavours at the same instant, so a test can compare them during one suspension. */
  @Get('both')
  @HealthCheck()
  both() {
    return this.health.check([
      () => this.zookeeper.isHealthy('zookeeper'),
      () => this.zookeeper.isHealthy('strict', { downWhenSuspended: true }),
    ]);
  }
}

interface Body {
  status: string;
  info?: Record<string, Record<string, unknown>>;
  error?: Record<string, Record<string, unknown>>;
}

describe('ZkLockHealthIndicator over HTTP, with TerminusModule, on a real ZooKeeper', () => {
  const zk = useZooKeeper({ own: true });
  const rootPath = uniqueRoot('health');
  const digest = 'health-user:s3cret-password';
  let application: INestApplication;
  let base: string;

  async function get(path: string): Promise<{ status: number; body: Body; text: string }> {
    const response = await fetch(`${base}${path}`);
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as Body, text };
  }

  /** Polls `path` until its answer satisfies `wanted`, and returns that answer. */
  async function until(path: string, wanted: (answer: Awaited<ReturnType<typeof get>>) => boolean, what: string, timeoutMs?: number) {
    let last: Awaited<ReturnType<typeof get>> | undefined;
    await eventually(
      async () => {
        last = await get(path);
        return wanted(last);
      },
      { what, timeoutMs },
    );
    return last!;
  }

  beforeAll(async () => {
    @Module({
      imports: [
        ZkLockModule.forRoot({
          connectionString: zk.connectString,
          // The longest session the test server allows: a suspension lasts long enough to be seen;
          // and a 3 s lease (STEADY_SESSION), which a loaded machine does not end mid-request.
          ...STEADY_SESSION,
          shutdownGraceMs: 50,
          rootPath,
          digest,
        }),
        TerminusModule,
      ],
      controllers: [HealthController],
      providers: [ZkLockHealthIndicator],
    })
    class HealthAppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [HealthAppModule] }).compile();
    application = moduleRef.createNestApplication({ logger: false });
    await application.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(application.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await application?.close();
  });

  it('GET /health is 200 up, with the connect string, session and locks held, and never the digest password', async () => {
    const lock = await application.get(LockService).acquire('report');
    const { status, body, text } = await get('/health');
    await lock.release();
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.info?.zookeeper).toEqual({
      status: 'up',
      connectionString: zk.connectString,
      state: 'connected',
      sessionId: expect.stringMatching(/^0x[0-9a-f]+$/),
      sessionTimeoutMs: 4000,
      server: zk.connectString,
      members: [zk.connectString],
      heldLocks: 1,
      addon: 'nestjs-zk-lock',
      tls: false,
      elections: [],
    });
    expect(text).not.toContain('s3cret');
    expect((await get('/health')).body.info?.zookeeper?.heldLocks).toBe(0);
  });

  it("lists this instance's elections: up while it follows, state leading with the term's token once it leads", async () => {
    const other = await startLockApp(zk, { rootPath, digest, ...STEADY_SESSION });
    let ours: Election | undefined;
    try {
      // Another instance joins first and leads; this one follows.
      await other.locks.elect('relay', { id: 'other' }).leadership();
      ours = application.get(LockService).elect('relay', { id: 'health-a' });
      await eventually(async () => (await ours!.participants()).length === 2, { what: 'this instance to queue' });
      const following = await get('/health');
      expect(following.status).toBe(200);
      expect(following.body.info?.zookeeper?.status).toBe('up');
      expect(following.body.info?.zookeeper?.elections).toEqual([{ group: 'relay', id: 'health-a', state: 'following' }]);

      await other.application.close(); // it leaves the election: this instance leads next
      const term = await ours.leadership();
      const leading = await get('/health');
      expect(leading.status).toBe(200);
      expect(leading.body.info?.zookeeper).toMatchObject({
        status: 'up',
        elections: [{ group: 'relay', id: 'health-a', state: 'leading', fencingToken: term.fencingToken }],
      });
    } finally {
      await ours?.close();
      await other.application.close();
    }
  });

  it('follows an outage: up while suspended (down with downWhenSuspended), 503 down once lost, up again on a new session', async () => {
    const before = (await get('/health')).body.info!.zookeeper!.sessionId;
    await zk.server!.stop();
    const suspended = await until('/health/both', (answer) => answer.body.error?.strict?.state === 'suspended', 'a suspended session');
    expect(suspended.status).toBe(503);
    expect(suspended.body.info?.zookeeper).toMatchObject({ status: 'up', state: 'suspended' });
    expect(suspended.body.error?.strict).toMatchObject({ status: 'down', state: 'suspended' });

    const lost = await until('/health', (answer) => answer.status === 503, 'the session to be declared lost');
    expect(lost.body.status).toBe('error');
    expect(lost.body.error?.zookeeper).toMatchObject({ status: 'down', state: 'connecting', connectionString: zk.connectString });

    await zk.server!.start();
    const back = await until('/health', (answer) => answer.status === 200, 'a new session', 30_000);
    expect(back.body.info?.zookeeper).toMatchObject({ status: 'up', state: 'connected' });
    expect(back.body.info?.zookeeper?.sessionId).not.toBe(before);
  });

  it('is down with state closed once the application has shut down', async () => {
    const indicator = application.get(ZkLockHealthIndicator);
    await application.close();
    expect(indicator.isHealthy()).toEqual({ zookeeper: expect.objectContaining({ status: 'down', state: 'closed' }) });
  });
});

describe('the main entry point', () => {
  it('never imports @nestjs/terminus, directly or through another file', () => {
    const seen = new Set<string>();
    const offenders: string[] = [];
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      for (const [, specifier] of source.matchAll(/(?:import|export)\s[^'"]*?from\s+'([^']+)'/g)) {
        if (specifier!.startsWith('@nestjs/terminus')) offenders.push(file);
        if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!.replace(/\.js$/, '.ts')));
      }
    };
    const lib = join(import.meta.dirname, '../../lib');
    visit(join(lib, 'index.ts'));
    expect(seen.size).toBeGreaterThan(10);
    expect(offenders).toEqual([]);
    // The same walk does find it from the health entry point.
    visit(join(lib, 'health/index.ts'));
    expect(offenders).toEqual([join(lib, 'health/zk-lock.health.ts')]);
  });
});
