import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LockService, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index.js';
import type { ZooKeeperFixture } from './zk-fixtures.js';

/**
 * A Nest application with ZkLockModule on the test server (short session, short shutdown grace,
 * quiet logger), initialised: its LockService is connected. The caller closes it.
 */
export async function startLockApp(
  zk: ZooKeeperFixture,
  options: Partial<ZkLockModuleOptions> = {},
): Promise<{ application: INestApplication; locks: LockService }> {
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, sessionTimeoutMs: 1500, shutdownGraceMs: 50, ...options })],
  }).compile();
  const application = moduleRef.createNestApplication({ logger: false });
  await application.init();
  return { application, locks: application.get(LockService) };
}
