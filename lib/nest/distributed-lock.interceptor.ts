import {
  type CallHandler,
  type ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  Logger,
  type NestInterceptor,
} from '@nestjs/common';
import { catchError, EMPTY, Observable } from 'rxjs';
import { InvalidResourceNameError, LockServiceClosedError, LockTimeoutError } from '../errors.js';
import { LockBusyException } from './lock-busy.exception.js';
import { answerBusySocket } from './lock-busy.socket-answer.js';
import { runInNewLockContext } from '../context/lock-context.js';
import { ownerLabel } from '../context/lock-request.js';
import { ZK_LOCK_MODULE_OPTIONS } from '../service/zk-lock.module-definition.js';
import type { ZkLockModuleOptions } from '../service/zk-lock-options.interface.js';

/**
 * Registered globally by ZkLockModule. Gives every request its own lock context (so reentrancy is
 * per request, and two concurrent requests never share locks), and answers an HTTP request whose
 * @DistributedLock could not be had in time with the busy status and a JSON body naming the
 * resource (and a few other lock errors with their own status: see httpErrorOf). In the other
 * transports busy becomes a LockBusyException for LockBusyFilter (RPC, GraphQL) or an `exception`
 * event (WebSocket). Every other error, the handler's own included, passes through untouched.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  private readonly busyStatus: 409 | 423;
  private readonly logger = new Logger('ZkLock');

  constructor(@Inject(ZK_LOCK_MODULE_OPTIONS) options: ZkLockModuleOptions) {
    this.busyStatus = options.busyStatus ?? 409;
  }

  /**
   * The library's errors a client can act on, as HTTP answers: busy (409/423), a resource name built
   * from the request that cannot be a lock (400), the application shutting down (503). Everything
   * else, the handler's own errors included, passes through untouched.
   */
  private httpErrorOf(error: unknown): HttpException | undefined {
    if (error instanceof LockTimeoutError) {
      const message = `The resource "${error.resource}" is locked by another request; try again later.`;
      return answer(this.busyStatus, this.busyStatus === 423 ? 'Locked' : 'Conflict', message, error);
    }
    if (error instanceof InvalidResourceNameError) {
      return answer(400, 'Bad Request', `${error.message} The lock's name is made from this request: fix the request.`, error);
    }
    if (error instanceof LockServiceClosedError) {
      return answer(503, 'Service Unavailable', 'This instance is shutting down; try again (another instance may answer).', error);
    }
    return undefined;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const owner = (): string => ownerLabel(describeCall(context));
    const handled = new Observable<unknown>((subscriber) => runInNewLockContext(() => next.handle().subscribe(subscriber), owner));
    if (context.getType() === 'http') {
      return handled.pipe(
        catchError((error: unknown) => {
          throw this.httpErrorOf(error) ?? error;
        }),
      );
    }
    // RPC, GraphQL: busy becomes LockBusyException, which LockBusyFilter answers in the transport's
    // own terms (this file cannot build their exceptions without importing them). WebSocket: Nest
    // applies no global filter to gateways, so the busy answer is sent from here, and the handler
    // completes without a value (nothing more is sent, nothing is logged).
    return handled.pipe(
      catchError((error: unknown) => {
        if (!(error instanceof LockTimeoutError)) throw error;
        const busy = new LockBusyException(error);
        if (context.getType() === 'rpc' && isEventHandler(context.getHandler())) {
          // An event has no reply to carry LOCK_BUSY, and most transports drop a failed event
          // silently: say so, once, without a stack (busy is expected, not a fault).
          this.logger.warn(
            `${busy.message} ${context.getClass().name}.${context.getHandler().name} did not handle this event ` +
              '(an event has no reply to carry LOCK_BUSY): give its @DistributedLock a waitTimeoutMs to wait for the lock.',
          );
        }
        if (context.getType() !== 'ws') throw busy;
        answerBusySocket(context.getArgs(), busy.payload);
        return EMPTY;
      }),
    );
  }
}

/**
 * Whether a microservice handler is an @EventPattern one. Read from the metadata key and value
 * @nestjs/microservices writes (PATTERN_HANDLER_METADATA, PatternHandler.EVENT), not imported from it.
 */
function isEventHandler(handler: object): boolean {
  return Reflect.getMetadata('microservices:handler_type', handler) === 2;
}

function answer(status: number, error: string, message: string, cause: Error & { resource?: unknown }): HttpException {
  const resource = typeof cause.resource === 'string' ? cause.resource : undefined;
  return new HttpException({ statusCode: status, error, message, ...(resource === undefined ? {} : { resource }) }, status, { cause });
}

/** Who takes the locks of this call, as stored in lock nodes: `GET /orders/42 (OrdersController.update)`. */
function describeCall(context: ExecutionContext): string {
  const handler = `${context.getClass().name}.${context.getHandler().name}`;
  if (context.getType() !== 'http') return `${context.getType()} ${handler}`;
  const request = context.switchToHttp().getRequest<{ method?: string; url?: string }>();
  return `${request.method ?? ''} ${request.url ?? ''} (${handler})`;
}
