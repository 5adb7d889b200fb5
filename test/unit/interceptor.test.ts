import 'reflect-metadata';
import { type CallHandler, type ExecutionContext, HttpException, NotFoundException } from '@nestjs/common';
import { lastValueFrom, throwError, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { DistributedLockInterceptor } from '../../lib/nest/distributed-lock.interceptor.js';
import { InvalidResourceNameError, LockLostError, LockServiceClosedError, LockTimeoutError } from '../../lib/errors.js';
import { LockBusyException } from '../../lib/nest/lock-busy.exception.js';

const http = { getType: () => 'http' } as unknown as ExecutionContext;
const failing = (error: unknown): CallHandler => ({ handle: () => throwError(() => error) });

describe('DistributedLockInterceptor error mapping', () => {
  it('answers a busy lock with the configured status and a body naming the resource', async () => {
    for (const status of [409, 423] as const) {
      const interceptor = new DistributedLockInterceptor({ connectionString: 'x:1', busyStatus: status });
      const error = await lastValueFrom(interceptor.intercept(http, failing(new LockTimeoutError('reports', 0)))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HttpException);
      expect((error as HttpException).getStatus()).toBe(status);
      expect((error as HttpException).getResponse()).toMatchObject({ statusCode: status, resource: 'reports' });
    }
  });

  it('answers a name made from the request that cannot be a lock with 400, and shutdown with 503', async () => {
    const interceptor = new DistributedLockInterceptor({ connectionString: 'x:1' });
    const cases = [
      [new InvalidResourceNameError('a'.repeat(600), 'longer than 512 UTF-8 bytes'), 400],
      [new LockServiceClosedError('reports'), 503],
    ] as const;
    for (const [thrown, status] of cases) {
      const error = await lastValueFrom(interceptor.intercept(http, failing(thrown))).catch((e: unknown) => e);
      expect((error as HttpException).getStatus()).toBe(status);
      expect((error as HttpException).getResponse()).toMatchObject({ statusCode: status });
      expect((error as HttpException).cause).toBe(thrown);
    }
  });

  it('passes other lock errors through as they are', async () => {
    const lost = new LockLostError('reports', '1', 'the session expired');
    const interceptor = new DistributedLockInterceptor({ connectionString: 'x:1' });
    await expect(lastValueFrom(interceptor.intercept(http, failing(lost)))).rejects.toBe(lost);
  });

  it("leaves the handler's own errors untouched", async () => {
    const own = new NotFoundException('nope');
    const interceptor = new DistributedLockInterceptor({ connectionString: 'x:1' });
    await expect(lastValueFrom(interceptor.intercept(http, failing(own)))).rejects.toBe(own);
  });
});

describe('DistributedLockInterceptor outside HTTP', () => {
  const of = (type: string, args: unknown[] = []) =>
    ({ getType: () => type, getArgs: () => args, getHandler: () => function handler() {}, getClass: () => class Handlers {} }) as unknown as ExecutionContext;

  it('turns busy into LockBusyException for RPC and GraphQL, carrying the code and the resource', async () => {
    const interceptor = new DistributedLockInterceptor({ connectionString: 'x:1' });
    for (const type of ['rpc', 'graphql']) {
      const error = await lastValueFrom(interceptor.intercept(of(type), failing(new LockTimeoutError('reports', 0)))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockBusyException);
      expect((error as LockBusyException).payload).toMatchObject({ status: 'error', code: 'LOCK_BUSY', resource: 'reports' });
      expect((error as LockBusyException).extensions).toEqual({ code: 'LOCK_BUSY', resource: 'reports' });
    }
  });

  it('answers a WebSocket client itself (exception event and ack) and completes without a value', async () => {
    const emitted: unknown[] = [];
    const acked: unknown[] = [];
    const client = { emit: (event: string, payload: unknown) => emitted.push([event, payload]) };
    const interceptor = new DistributedLockInterceptor({ connectionString: 'x:1' });
    const context = of('ws', [client, {}, (payload: unknown) => acked.push(payload), 'report']);
    const values = await lastValueFrom(interceptor.intercept(context, failing(new LockTimeoutError('reports', 0))).pipe(toArray()));
    expect(values).toEqual([]);
    expect(emitted).toEqual([['exception', expect.objectContaining({ code: 'LOCK_BUSY', resource: 'reports' })]]);
    expect(acked).toEqual([expect.objectContaining({ code: 'LOCK_BUSY', resource: 'reports' })]);
  });

  it('leaves every other error of a non-HTTP handler untouched', async () => {
    const own = new Error('the handler failed');
    const interceptor = new DistributedLockInterceptor({ connectionString: 'x:1' });
    for (const type of ['rpc', 'ws', 'graphql']) {
      await expect(lastValueFrom(interceptor.intercept(of(type), failing(own)))).rejects.toBe(own);
    }
  });
});
