import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';
import { LockBusyException } from './lock-busy.exception.js';

/**
 * Registered globally by ZkLockModule. Answers a busy lock in the terms of the transport that asked,
 * which it tells by the context type alone: neither @nestjs/microservices nor @nestjs/graphql is
 * imported (their own exception classes would make them dependencies).
 *
 * - `rpc`: the client's request fails with the LockBusyPayload, as an RpcException's object would.
 * - `graphql` (and any other): the exception itself, whose `extensions` carry the code and resource.
 *
 * WebSocket gateways get no global filters from Nest: DistributedLockInterceptor answers them itself.
 */
@Catch(LockBusyException)
export class LockBusyFilter implements ExceptionFilter<LockBusyException> {
  catch(exception: LockBusyException, host: ArgumentsHost): Observable<never> {
    if (host.getType<string>() === 'rpc') return throwError(() => exception.payload);
    throw exception;
  }
}
