import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LockService, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index.js';
import { STEADY_SESSION, type ZooKeeperFixture } from './zk-fixtures.js';

/**
 * A Nest application with ZkLockModule on the test server (STEADY_SESSION unless `options` name a
 * session timeout, short shutdown grace, quiet logger), initialised: its LockService is connected.
 * The caller closes it. A test about a session ending by timeout passes its short session.
 */
export async function startLockApp(
  zk: ZooKeeperFixture,
  options: Partial<ZkLockModuleOptions> = {},
): Promise<{ application: INestApplication; locks: LockService }> {
  // A call that names its own session timeout does not take the steady lease margin with it.
  const session = options.sessionTimeoutMs === undefined ? STEADY_SESSION : {};
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, ...session, shutdownGraceMs: 50, ...options })],
  }).compile();
  const application = moduleRef.createNestApplication({ logger: false });
  await application.init();
  return { application, locks: application.get(LockService) };
}
