/**
 * The start-up check of rootPath's ACL warns only when the user can act on it: this client has a
 * digest identity and strangers may still create or delete under rootPath. Real ZooKeeper.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { ZkLockModule, type ZkLockModuleOptions } from '../../lib/index.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

describe('the root ACL warning', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);

  async function start(options: Partial<ZkLockModuleOptions>): Promise<string[]> {
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, ...options })],
    }).compile();
    const logger = new RecordingLogger();
    const app = moduleRef.createNestApplication({ logger });
    await app.init();
    await app.close();
    return [...logger.warnings, ...logger.errors];
  }

  it('a freshly configured application (no digest, default options) starts without a warning, every time', async () => {
    const rootPath = uniqueRoot('freshstart');
    expect(await start({ rootPath })).toEqual([]); // creates rootPath
    expect(await start({ rootPath })).toEqual([]); // finds it
  });

  it('with a digest identity, an open rootPath is warned about, saying what to do', async () => {
    const rootPath = uniqueRoot('openroot');
    await (await connect()).session().then((session) => session.create(rootPath, '', 'PERSISTENT'));
    const warnings = await start({ rootPath, digest: 'orders-app:s3cret' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/world:anyone create or delete.*setAcl.*rootAclCheck/);
  });
});
