/**
 * An option name the connection or the module does not know fails start-up, naming it and the
 * closest known name, at every entry point: new ZkConnection, forRoot, and what forRootAsync's
 * factory or class returns. Nothing connects: the refusal comes first.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, ZkConnection, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index.js';
import { closestName } from '../../lib/shared/known-keys.js';

const CONNECT = '127.0.0.1:2181';

function refusal(run: () => unknown): InvalidOptionsError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    return error as InvalidOptionsError;
  }
  throw new Error('accepted');
}

async function startUp(module: ReturnType<typeof ZkLockModule.forRoot>): Promise<unknown> {
  return Test.createTestingModule({ imports: [module] })
    .compile()
    .then(
      async (ref) => {
        await ref.close();
        return 'started';
      },
      (error: unknown) => error,
    );
}

describe('an option name that is not known', () => {
  it('new ZkConnection refuses it, naming it and the option meant', () => {
    const typo = refusal(() => new ZkConnection({ connectionString: CONNECT, sessionTimeout: 5000 } as never));
    expect(typo.option).toBe('sessionTimeout');
    expect(typo.message).toBe(
      'Invalid nestjs-zk-lock option "sessionTimeout": is not a ZkConnection option (misspelt, or an option of another version of nestjs-zk-lock): ' +
        'the closest option is "sessionTimeoutMs".',
    );
    expect(refusal(() => new ZkConnection({ connectString: CONNECT } as never)).message).toMatch(/"connectString".*closest option is "connectionString"/);
    // A module option is not the connection's.
    expect(refusal(() => new ZkConnection({ connectionString: CONNECT, rootPath: '/x' } as never)).message).toMatch(
      /"rootPath": is not a ZkConnection option .*the options are connectionString, sessionTimeoutMs, leaseMarginMs, connectTimeoutMs, clientLogLevel, digest, tls/,
    );
    expect(() => new ZkConnection({ connectionString: CONNECT, sessionTimeoutMs: 5000 }).close()).not.toThrow(); // the control
  });

  it('forRoot refuses it at start-up, and a known name starts (the control)', async () => {
    const typo = await startUp(ZkLockModule.forRoot({ connectionString: CONNECT, sessionTimeout: 5000 } as ZkLockModuleOptions));
    expect(typo).toBeInstanceOf(InvalidOptionsError);
    expect((typo as Error).message).toMatch(/"sessionTimeout": is not a ZkLockModule option .*the closest option is "sessionTimeoutMs"/);
    expect(await startUp(ZkLockModule.forRoot({ connectionString: CONNECT, rootPth: '/a' } as ZkLockModuleOptions))).toMatchObject({ option: 'rootPth' });
    // isGlobal is forRoot's own, not an option.
    expect(await startUp(ZkLockModule.forRoot({ connectionString: CONNECT, sessionTimeoutMs: 5000, isGlobal: true }))).toBe('started');
  });

  it("forRootAsync refuses it in what useFactory returns, and in what useClass's method returns", async () => {
    const factory = await startUp(ZkLockModule.forRootAsync({ useFactory: () => ({ connectString: CONNECT }) as ZkLockModuleOptions }));
    expect(factory).toMatchObject({ option: 'connectString' });
    expect((factory as Error).message).toMatch(/closest option is "connectionString"/);

    @Injectable()
    class Options {
      create(): ZkLockModuleOptions {
        return { connectionString: CONNECT, defaultWaitTimeout: 100 } as ZkLockModuleOptions;
      }
    }
    expect(await startUp(ZkLockModule.forRootAsync({ useClass: Options }))).toMatchObject({ option: 'defaultWaitTimeout' });
  });

  it('inside cohort too (tls refuses its own fields)', async () => {
    const typo = await startUp(ZkLockModule.forRoot({ connectionString: CONNECT, cohort: { maxHold: 10 } as never }));
    expect(typo).toMatchObject({ option: 'cohort.maxHold' });
    expect((typo as Error).message).toMatch(/is not a cohort option .*closest option is "cohort\.maxHoldMs"/);
    expect(await startUp(ZkLockModule.forRoot({ connectionString: CONNECT, cohort: { maxHoldMs: 10 } }))).toBe('started');
    expect(await startUp(ZkLockModule.forRoot({ connectionString: CONNECT, cohort: false }))).toBe('started');
  });

  it('suggests a name only when it is close', () => {
    const names = ['connectionString', 'sessionTimeoutMs', 'connectTimeoutMs', 'digest', 'tls', 'rootPath'];
    expect(closestName('SessionTimeoutMs', names)).toBe('sessionTimeoutMs');
    expect(closestName('sessionTimeout', names)).toBe('sessionTimeoutMs');
    expect(closestName('connectString', names)).toBe('connectionString');
    expect(closestName('connectTimeout', names)).toBe('connectTimeoutMs');
    expect(closestName('digets', names)).toBe('digest');
    expect(closestName('rootpath', names)).toBe('rootPath');
    expect(closestName('sasl', names)).toBeUndefined();
    expect(closestName('retries', names)).toBeUndefined();
  });
});
