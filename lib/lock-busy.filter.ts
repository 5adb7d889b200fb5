import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';
import { LockBusyException, type LockBusyPayload } from './lock-busy.exception.js';

/** The client of a WebSocket handler: a socket.io Socket (`emit`) or a native WebSocket (`send`). */
interface SocketClient {
  emit?: (event: string, payload: unknown) => unknown;
  send?: (data: string) => unknown;
  readyState?: unknown;
}

/**
 * Registered globally by ZkLockModule. Answers a busy lock in the terms of the transport that asked,
 * which it tells by the context type alone: none of @nestjs/microservices, @nestjs/websockets or
 * @nestjs/graphql is imported (their own exception classes would make them dependencies).
 *
 * - `rpc`: the client's request fails with the LockBusyPayload, as an RpcException's object would.
 * - `ws`: the `exception` event carries the payload, as a WsException's would; a socket.io client
 *   waiting for an ack gets the payload there too instead of waiting forever.
 * - `graphql` (and any other): the exception itself, whose `extensions` carry the code and resource.
 */
@Catch(LockBusyException)
export class LockBusyFilter implements ExceptionFilter<LockBusyException> {
  catch(exception: LockBusyException, host: ArgumentsHost): Observable<never> | undefined {
    const type = host.getType<string>();
    if (type === 'rpc') return throwError(() => exception.payload);
    if (type === 'ws') {
      answerSocket(host.getArgs(), exception.payload);
      return undefined;
    }
    throw exception;
  }
}

/** A gateway handler's arguments are `[client, data, ack?, pattern]` (the ack when the client asked for one). */
function answerSocket(args: unknown[], payload: LockBusyPayload): void {
  const client = args[0] as SocketClient | undefined;
  if (typeof client?.readyState === 'number' && typeof client.send === 'function') {
    // A native WebSocket (the ws adapter): its emit only fires local listeners.
    client.send(JSON.stringify({ event: 'exception', data: payload }));
  } else if (typeof client?.emit === 'function') {
    client.emit('exception', payload);
  }
  const ack = args.slice(1).find((arg): arg is (response: unknown) => void => typeof arg === 'function');
  ack?.(payload);
}
