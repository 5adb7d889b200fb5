/** The example of docs/testing.md (A service with `@DistributedLock`, in a Nest testing module), run as written (imports aside). */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { DistributedLock, LockLostError, LockService } from '../../lib/index.js';
import { InMemoryZooKeeper, ZkLockTestingModule } from '../../lib/testing/index.js';

// --- report.job.ts
export abstract class ReportStore {
  abstract build(options: { signal: AbortSignal; fencingToken: string }): Promise<void>;
}

@Injectable()
export class ReportJob {
  constructor(
    private readonly locks: LockService,
    private readonly reports: ReportStore,
  ) {}

  @DistributedLock('nightly-report', { onBusy: 'skip' })
  async run(): Promise<string> {
    const lock = this.locks.heldLock('nightly-report')!;
    await this.reports.build({ signal: lock.signal, fencingToken: lock.fencingToken });
    return 'done';
  }
}

// --- report.job.spec.ts
/** A report that runs until the test finishes it, or until its lock's signal aborts. */
class FakeReports extends ReportStore {
  finish = (): void => undefined;
  private began = (): void => undefined;
  readonly started = new Promise<void>((resolve) => (this.began = resolve));

  build({ signal }: { signal: AbortSignal }): Promise<void> {
    this.began();
    return new Promise((resolve, reject) => {
      this.finish = resolve;
      signal.addEventListener('abort', () => reject(signal.reason));
    });
  }
}

async function startApp(zookeeper: InMemoryZooKeeper) {
  const moduleRef = await Test.createTestingModule({
    // in place of ZkLockModule.forRoot({ connectionString, ... })
    imports: [ZkLockTestingModule.forRoot({ zookeeper })],
    providers: [ReportJob, { provide: ReportStore, useClass: FakeReports }],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, job: app.get(ReportJob), reports: app.get(ReportStore) as FakeReports };
}

describe('ReportJob', () => {
  it('runs on one instance at a time: another instance skips while the first holds the lock', async () => {
    const zookeeper = new InMemoryZooKeeper(); // shared: the two apps contend
    const one = await startApp(zookeeper);
    const two = await startApp(zookeeper);
    const first = one.job.run();
    await one.reports.started; // one holds the lock now
    expect(await two.job.run()).toBeUndefined(); // skipped
    one.reports.finish();
    expect(await first).toBe('done');
    await one.app.close();
    await two.app.close();
  });

  it('stops the report when the lock is lost', async () => {
    const { app, job, reports } = await startApp(new InMemoryZooKeeper());
    const running = job.run();
    await reports.started;
    // The app's ZooKeeper session expires: the lock's signal aborts with LockLostError.
    app.get(InMemoryZooKeeper).expireSession(app.get(LockService));
    await expect(running).rejects.toBeInstanceOf(LockLostError);
    await app.close();
  });
});
