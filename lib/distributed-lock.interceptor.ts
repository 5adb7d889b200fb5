import {
  type CallHandler,
  type ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { catchError, Observable } from 'rxjs';
import { LockTimeoutError } from './errors.js';
import { runInNewLockContext } from './lock-context.js';
import { ownerLabel } from './lock-request.js';
import { ZK_LOCK_MODULE_OPTIONS } from './zk-lock.module-definition.js';
import type { ZkLockModuleOptions } from './zk-lock-options.interface.js';

/**
 * Registered globally by ZkLockModule. Gives every request its own lock context (so reentrancy is
 * per request, and two concurrent requests never share locks), and answers an HTTP request whose
 * @DistributedLock could not be had in time with the busy status and a JSON body naming the
 * resource. Every other error, the handler's own included, passes through untouched.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  private readonly busyStatus: 409 | 423;

  constructor(@Inject(ZK_LOCK_MODULE_OPTIONS) options: ZkLockModuleOptions) {
    this.busyStatus = options.busyStatus ?? 409;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const owner = (): string => ownerLabel(describeCall(context));
    const handled = new Observable<unknown>((subscriber) => runInNewLockContext(() => next.handle().subscribe(subscriber), owner));
    if (context.getType() !== 'http') return handled;
    return handled.pipe(
      catchError((error: unknown) => {
        if (!(error instanceof LockTimeoutError)) throw error;
        throw new HttpException(
          {
            statusCode: this.busyStatus,
            error: this.busyStatus === 423 ? 'Locked' : 'Conflict',
            message: `The resource "${error.resource}" is locked by another request; try again later.`,
            resource: error.resource,
          },
          this.busyStatus,
          { cause: error },
        );
      }),
    );
  }
}

/** Who takes the locks of this call, as stored in lock nodes: `GET /orders/42 (OrdersController.update)`. */
function describeCall(context: ExecutionContext): string {
  const handler = `${context.getClass().name}.${context.getHandler().name}`;
  if (context.getType() !== 'http') return `${context.getType()} ${handler}`;
  const request = context.switchToHttp().getRequest<{ method?: string; url?: string }>();
  return `${request.method ?? ''} ${request.url ?? ''} (${handler})`;
}
