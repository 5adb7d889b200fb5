import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import type { GrantToken } from './fencing-token.js';
import type { LockDriver } from './lock-driver.js';

/** Where the queue gets its session: ZkConnection, the testing kit's InMemoryConnection, or a fake in tests. */
export interface SessionSource {
  /**
   * The current session while it is live, as a plain field, so that an acquire reads it without a
   * call: undefined while none is (a new one on its way, the servers refusing sessions for want of
   * authentication, the connection closed). A reader still checks `lost.aborted` (the session may
   * have ended since), and otherwise calls `session()`, which waits, or says why there is none.
   */
  readonly live: ZkSessionApi | undefined;
  /** The current live session, waiting for one while a new one is being opened, or why there is none. */
  session(signal?: AbortSignal): Promise<ZkSessionApi>;
}

/** A granted lock node. */
export interface QueueGrant {
  readonly session: ZkSessionApi;
  /** Full path of the lock node this grant owns. */
  readonly path: string;
  /**
   * The fencing token, which grows with every grant of the resource (see fencing-token.ts): for a
   * queue, the epoch, the parent's czxid and the node's sequence number, which are known without
   * reading the queue again; formatted when first read (GrantedLock.fencingToken).
   */
  readonly token: GrantToken;
  /**
   * Which incarnation of the queue granted it: the parent's czxid (a reaped and re-created parent
   * restarts its sequence numbers). Empty for the simple lock, which has no queue.
   */
  readonly queueId: string;
  /**
   * Release by writing the node and deleting it in one transaction: the write tells the entry after
   * it, if that entry watches it, that it now holds the lock (`Decision.grantedByWrite`), which saves that
   * waiter a listing of the queue on the way to the grant. Set for exclusive and write entries that
   * are likely to have a successor (they waited, or saw entries after their own); an uncontended
   * lock is released with the delete alone.
   */
  readonly grantByWrite?: boolean;
}

/** The held write a downgrade read is taken under. */
export interface UnderWrite {
  /** The read queues in this session only: when it ends, the acquire fails with ZkSessionLostError. */
  readonly session: ZkSessionApi;
  /**
   * The read's token. Its own sequence number would not do: the read is created after the writers
   * already waiting, who are nonetheless granted after it (a writer at the head waits for it).
   */
  readonly fencingToken: string;
}

/** Told once how an acquire ended. */
export interface QueueSink {
  /** The grant; null only for `noWait`. */
  granted(grant: QueueGrant | null): void;
  failed(error: unknown): void;
  /** Told each time the entry starts watching: it waits behind others (an election's first term is then decided). */
  waiting?(): void;
}

/** One acquire, as a recipe asks the queue for it. */
export interface WaiterSpec {
  /** The queue's parent node: `<rootPath>/<encoded resource>`, or the lock's `zkPath`. */
  readonly parent: string;
  /** Says, from a listing, whether the entry holds and whom it watches otherwise. */
  readonly driver: LockDriver;
  /** Stored in the entry's node. */
  readonly data: Buffer;
  /** Ends the wait: the node is removed (or its removal scheduled when disconnected). */
  readonly stop: AbortSignal;
  /** Give up at once (null) when the lock is taken. */
  readonly noWait: boolean;
  /** A downgrade read: queued only in the write's session, carrying the write's token. */
  readonly under?: UnderWrite;
}
