import type { Logger } from '@nestjs/common';
import { InvalidOptionsError, shown } from '../errors.js';
import { validateWaitTimeout } from '../context/lock-request.js';
import { ShutdownGate } from '../context/shutdown-gate.js';
import { MinimumHolds } from '../context/minimum-holds.js';
import { type LockEventLogLevel, logEventsLevel, logLockEvents } from '../events/lock-event-logger.js';
import { LockEvents } from '../events/lock-events.js';
import { LockTracing } from '../events/lock-tracing.js';
import { RecipeSet } from '../recipes/recipe-set.js';
import { type ClientIdentity, ownerAcl } from '../zookeeper/zk-acl.js';
import { ZkConnection } from '../zookeeper/zk-connection.js';
import { pickConnectionOptions } from '../zookeeper/zk-connection.options.js';
import type { ZkConnectionLike } from '../zookeeper/zk-connection-like.js';
import { startupError } from '../zookeeper/zk-errors.js';
import { refuseUnknownModuleOptions } from './known-options.js';
import { LockAcquirer } from './lock-acquirer.js';
import { ElectionRegistry } from './election-registry.js';
import type { ZkLockModuleOptions } from './zk-lock-options.interface.js';

const DEFAULT_SHUTDOWN_GRACE_MS = 5000;
let services = 0;
/** The root paths (with their connect string) already warned about in this process. */
const warnedRootPaths = new Set<string>();

/** What one LockService is made of, built from its module options (checked here, once). */
export interface LockServiceParts {
  readonly connection: ZkConnectionLike;
  /** The connection is ours (made from the options), closed at shutdown; a supplied one is not. */
  readonly ownsConnection: boolean;
  readonly recipes: RecipeSet;
  /** The locks taken from ZooKeeper, and what shutdown does to them and to the callers waiting. */
  readonly shutdown: ShutdownGate;
  readonly rootAclCheck: 'warn' | 'error' | 'off';
  readonly events: LockEvents;
  /** Locks released by their callers before their holdAtLeastMs was over. */
  readonly holds: MinimumHolds;
  /** The elections this service takes part in. */
  readonly elections: ElectionRegistry;
  /** A call to a handle: the request checked, its context policy, the release hooks. */
  readonly acquirer: LockAcquirer;
  /** The level lock events are logged at (`logEvents`), or undefined: not logged. */
  readonly eventLogLevel: LockEventLogLevel | undefined;
  /** What to undo at shutdown: listeners on the connection and the event log. */
  readonly detach: (() => void)[];
}

/** Checks the module options and builds the parts of a LockService (see lock.service.ts). */
export function lockServiceParts(options: ZkLockModuleOptions, logger: Logger): LockServiceParts {
  refuseUnknownModuleOptions(options);
  const defaultWaitTimeoutMs = validateWaitTimeout(options.defaultWaitTimeoutMs, 'defaultWaitTimeoutMs');
  const shutdownGraceMs = validateWaitTimeout(options.shutdownGraceMs, 'shutdownGraceMs') ?? DEFAULT_SHUTDOWN_GRACE_MS;
  const ownsConnection = !options.connection;
  const shutdown = new ShutdownGate(shutdownGraceMs, !ownsConnection, (message) => logger.warn(message));
  // ZkConnection checks connectionString itself: required unless a connection is supplied.
  const connection = options.connection ?? new ZkConnection(pickConnectionOptions(options));
  if (![undefined, 'warn', 'error', 'off'].includes(options.rootAclCheck)) {
    throw new InvalidOptionsError('rootAclCheck', `must be 'warn', 'error' or 'off', got ${shown(options.rootAclCheck)}`);
  }
  if (![undefined, true, false].includes(options.tracing)) {
    throw new InvalidOptionsError('tracing', `must be true or false (false: no spans even with @opentelemetry/api installed), got ${shown(options.tracing)}`);
  }
  const events = new LockEvents(LockTracing.create(options.tracing));
  const recipes = new RecipeSet(connection, {
    rootPath: options.rootPath,
    acl: options.acl ?? ownerAcl(identityOf(connection)),
    connectWaitMs: connection.connectTimeoutMs,
    tokenEpoch: options.tokenEpoch,
    cohort: options.cohort,
    layout: options.layout,
    onBackgroundError: (error) => logger.warn(`Lock clean-up failed and will be left to the session: ${String(error)}`),
  });
  const holds = new MinimumHolds((error) => logger.warn(`Releasing a lock after its minimum hold failed: ${String(error)}`));
  const elections = new ElectionRegistry(recipes.runtime, events, recipes.layout, shutdownGraceMs, logger);
  const defaults = { waitTimeoutMs: defaultWaitTimeoutMs, layout: recipes.layout };
  const acquirer = new LockAcquirer(defaults, `s${++services}`, recipes, shutdown, events, holds, elections);
  const detach: (() => void)[] = [];
  const logLevel = logEventsLevel(options.logEvents);
  const logging = logLevel && logLockEvents(events.events$, logger, logLevel);
  if (logging) detach.push(() => logging.unsubscribe());
  const forgetState = connection.onStateChange((state, sessionId) => {
    if (state === 'lost') {
      logger.warn(
        `ZooKeeper session 0x${sessionId} was lost: every lock held through it is lost (its holder's signal aborted ` +
          'with LockLostError). Opening a new session.',
      );
    }
    events.connection(state, sessionId);
  });
  detach.push(forgetState);
  const rootAclCheck = options.rootAclCheck ?? 'warn';
  return { connection, ownsConnection, recipes, shutdown, rootAclCheck, events, holds, elections, acquirer, eventLogLevel: logLevel, detach };
}

/** Who the connection authenticates as, for ACLs. */
function identityOf(connection: ZkConnectionLike): ClientIdentity {
  return { digest: connection.digest, saslNames: connection.sasl?.names };
}

/** At start-up, once connected: the ACL of rootPath, as `rootAclCheck` asks. */
export async function checkRootAcl({ connection, recipes, rootAclCheck, eventLogLevel }: LockServiceParts, logger: Logger): Promise<void> {
  if (rootAclCheck === 'off') return;
  const problem = await recipes.rootAclProblem(identityOf(connection)).catch((error: unknown) => {
    throw startupError(error, connection.connectionString, recipes.runtime.rootPath);
  });
  if (!problem) return;
  if (rootAclCheck === 'error') throw new InvalidOptionsError('rootPath', problem);
  // Without an identity (digest or SASL) nothing can be protected: an open rootPath is what such
  // a setup looks like, not a fault, and a warning at every start would teach users to ignore
  // warnings; it is logged at the logEvents level, as routine events are. With one, the user asked
  // for protection and did not get it: a warning, once per path and process (not at every start
  // of a test's application).
  const message = `${problem} (rootAclCheck: 'off' silences this check).`;
  const key = `${connection.connectionString}${recipes.runtime.rootPath}`;
  if (connection.digest === undefined && connection.sasl === undefined) {
    if (eventLogLevel) logger[eventLogLevel](message);
  } else if (!warnedRootPaths.has(key)) {
    warnedRootPaths.add(key);
    logger.warn(message);
  }
}
