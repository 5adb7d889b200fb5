import { ZkConnectionLossError } from './zk-errors.js';
import type { ZkSessionApi } from './zk-session-api.js';

/**
 * Resolves when any of the watched nodes changes or is gone (or the connection dropped: re-reading
 * after reconnecting tells what happened). With `pokable`, a node whose data was already written
 * when the watch was set counts as changed. Rejects on stop or session loss.
 */
export async function waitForChange(session: ZkSessionApi, paths: readonly string[], stop: AbortSignal, pokable = false): Promise<void> {
  if (!session.connected) await session.whenConnected(stop);
  stop.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    let forgetSession = (): void => undefined;
    const watches: { cancel(): void }[] = [];
    const finish = (error?: unknown): void => {
      if (settled) return;
      settled = true;
      for (const watch of watches) watch.cancel();
      stop.removeEventListener('abort', onStop);
      forgetSession();
      if (error === undefined) resolve();
      else reject(error);
    };
    const onStop = (): void => finish(stop.reason);
    stop.addEventListener('abort', onStop, { once: true });
    forgetSession = session.onLost(() => finish(session.lost.reason));
    if (settled) forgetSession(); // it had ended already
    for (const path of paths) {
      if (settled) break;
      const watch = session.watchNode(path, () => finish());
      watches.push(watch);
      watch.armed.then(
        (stat) => {
          if (!stat || (pokable && stat.version > 0)) finish();
        },
        // A dropped connection: re-reading after reconnecting tells what happened.
        (error: unknown) => finish(error instanceof ZkConnectionLossError ? undefined : error),
      );
    }
  });
}
