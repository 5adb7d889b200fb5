import { type DynamicModule, Module } from '@nestjs/common';
import { InvalidOptionsError, shown } from '../errors.js';
import { checkMs, type MsRange } from '../shared/durations.js';
import { checkTargets } from '../recipes/inspect-elsewhere.js';
import { createViewController, type ResolvedViewOptions } from './zk-lock-view.controller.js';
import type { ZkLockViewOptions } from './zk-lock-view-options.interface.js';

const DEFAULT_PATH = 'zk-locks';
const DEFAULT_REFRESH_MS = 2000;
const DEFAULT_READ_TIMEOUT_MS = 5000;
/** Both durations: any finite number of ms from 100. */
const FROM_100: MsRange = { min: 100 };

/**
 * Opt-in live view of every lock under rootPath: `ZkLockViewModule.register()` next to
 * `ZkLockModule.forRoot(...)` serves an HTML page at GET /zk-locks and its JSON at GET
 * /zk-locks/data. Nothing is served unless this module is imported. The page shows lock owners,
 * hosts and pids: put it behind your authentication (the `guards` option, or a global guard).
 */
@Module({})
export class ZkLockViewModule {
  static register(options: ZkLockViewOptions = {}): DynamicModule {
    return { module: ZkLockViewModule, controllers: [createViewController(resolve(options))] };
  }
}

function resolve(options: ZkLockViewOptions): ResolvedViewOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionsError('ZkLockViewModule.register', 'takes an options object or nothing');
  }
  const path = (options.path ?? DEFAULT_PATH).replace(/^\/+|\/+$/g, '');
  if (path === '' || !/^[A-Za-z0-9._~\-/]+$/.test(path)) {
    throw new InvalidOptionsError('path', `must be a non-empty URL path such as 'zk-locks' or 'admin/locks', got ${shown(options.path)}`);
  }
  return {
    path,
    refreshMs: checkMs(options.refreshMs, 'refreshMs', FROM_100) ?? DEFAULT_REFRESH_MS,
    readTimeoutMs: checkMs(options.readTimeoutMs, 'readTimeoutMs', FROM_100) ?? DEFAULT_READ_TIMEOUT_MS,
    guards: options.guards ?? [],
    // Checked now, so that a bad path fails the app's start; rootPath is checked at each read.
    ...checkTargets(options),
  };
}
