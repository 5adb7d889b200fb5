import { Injectable } from '@nestjs/common';
import { type HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import type { LockSessionInfo } from '../events/lock-event-types.js';
import { LockService } from '../service/lock.service.js';

/** Options of one `ZkLockHealthIndicator.isHealthy` check. */
export interface ZkLockHealthOptions {
  /**
   * Report `down` while the connection is suspended (dropped, session perhaps still alive on the
   * server, locks still held until the session timeout). Off, a suspended session is `up` with
   * `state: 'suspended'` in the details, so a short network blip does not fail the probe.
   * @default false
   */
  downWhenSuspended?: boolean;
}

/** What the indicator reports under its key, besides `status`. */
export type ZkLockHealthDetails = Omit<LockSessionInfo, 'sessionId' | 'sessionTimeoutMs' | 'server'> & {
  /** The member the session is connected to (`address:port`), or null while disconnected. */
  readonly server: string | null;
  /** The session's id as ZooKeeper prints it (`0x…`), or null before the first session. */
  readonly sessionId: string | null;
  /** The session timeout the server granted, in ms, or null before the first session. */
  readonly sessionTimeoutMs: number | null;
};

/**
 * The ZooKeeper session of the application's LockService, for `@nestjs/terminus`: `up` while the
 * session is connected, `down` once it is lost (until a new one is connected) or closed. Register it
 * as a provider next to `TerminusModule` in a module that can see LockService.
 */
@Injectable()
export class ZkLockHealthIndicator {
  constructor(
    private readonly locks: LockService,
    private readonly healthIndicatorService: HealthIndicatorService,
  ) {}

  /** Checks the session now, with no request to ZooKeeper (its state is known locally). */
  isHealthy<const Key extends string = 'zookeeper'>(
    key: Key = 'zookeeper' as Key,
    options: ZkLockHealthOptions = {},
  ): HealthIndicatorResult<Key> {
    const indicator = this.healthIndicatorService.check(key);
    const info = this.locks.sessionInfo();
    const details: ZkLockHealthDetails = {
      connectionString: info.connectionString,
      state: info.state,
      sessionId: info.sessionId === undefined ? null : `0x${info.sessionId}`,
      sessionTimeoutMs: info.sessionTimeoutMs ?? null,
      server: info.server ?? null,
      members: info.members,
      heldLocks: info.heldLocks,
      addon: info.addon,
      tls: info.tls,
      elections: info.elections,
    };
    const up = info.state === 'connected' || (info.state === 'suspended' && !options.downWhenSuspended);
    return up ? indicator.up(details) : indicator.down(details);
  }
}
