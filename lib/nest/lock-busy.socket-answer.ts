import type { LockBusyPayload } from './lock-busy.exception.js';

/** The client of a WebSocket handler: a socket.io Socket (`emit`) or a native WebSocket (`send`). */
interface SocketClient {
  emit?: (event: string, payload: unknown) => unknown;
  send?: (data: string) => unknown;
  readyState?: unknown;
}

/**
 * Answers a WebSocket handler's busy lock as a WsException's object would be answered: the
 * `exception` event carries the payload. A socket.io client that asked for an ack gets the payload
 * there too, rather than waiting for an ack Nest never sends after an error. Written against the
 * shapes of the handler's arguments, `[client, data, ack?, pattern]`, so that @nestjs/websockets is
 * not imported. (Nest applies no global exception filter to gateways, so this cannot be one.)
 */
export function answerBusySocket(args: readonly unknown[], payload: LockBusyPayload): void {
  const client = args[0] as SocketClient | undefined;
  if (typeof client?.readyState === 'number' && typeof client.send === 'function') {
    // A native WebSocket (the ws adapter): its emit would only fire local listeners.
    client.send(JSON.stringify({ event: 'exception', data: payload }));
  } else if (typeof client?.emit === 'function') {
    client.emit('exception', payload);
  }
  const ack = args.slice(1).find((arg): arg is (response: unknown) => void => typeof arg === 'function');
  ack?.(payload);
}
