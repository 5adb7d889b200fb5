import type { Logger } from '@nestjs/common';

/**
 * How long after start-up the check runs: main.ts may call `app.enableShutdownHooks()` after
 * `await app.listen()`, which resolves after the bootstrap hooks.
 */
const CHECK_AFTER_MS = 1000;
/** Said once per process, however many applications it starts. */
let warned = false;

/**
 * Warns once per process when an application that takes part in elections would die on SIGTERM
 * without closing its ZooKeeper session: the next leader would then wait for the session timeout.
 *
 * A library must not install signal handlers (the application decides how it stops), so it only
 * looks: with no SIGTERM listener at all, Node ends the process at once and no shutdown hook runs.
 * Any listener counts (`app.enableShutdownHooks()`, or the application's own handler that calls
 * `app.close()`). Test runs (NODE_ENV=test, set by Jest and Vitest) are never stopped by SIGTERM:
 * no warning there. Returns the function that cancels the check (at shutdown).
 */
export function checkShutdownHooksSoon(logger: Pick<Logger, 'warn'>, usesElections: () => boolean): () => void {
  if (process.env.NODE_ENV === 'test') return () => undefined;
  const timer = setTimeout(() => {
    if (warned || process.listenerCount('SIGTERM') > 0 || !usesElections()) return;
    warned = true;
    logger.warn(
      'This application takes part in elections, but nothing handles SIGTERM: a stop would hand leadership over only when ' +
        'its ZooKeeper session expires (sessionTimeoutMs), not at once. Call app.enableShutdownHooks() in main.ts, before app.listen().',
    );
  }, CHECK_AFTER_MS);
  timer.unref();
  return () => clearTimeout(timer);
}
