import 'reflect-metadata';
import { type CallHandler, type ExecutionContext, HttpException, NotFoundException } from '@nestjs/common';
import { lastValueFrom, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { DistributedLockInterceptor } from '../../lib/distributed-lock.interceptor.js';
import { LockTimeoutError } from '../../lib/errors.js';

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

  it("leaves the handler's own errors untouched", async () => {
    const own = new NotFoundException('nope');
    const interceptor = new DistributedLockInterceptor({ connectionString: 'x:1' });
    await expect(lastValueFrom(interceptor.intercept(http, failing(own)))).rejects.toBe(own);
  });
});
