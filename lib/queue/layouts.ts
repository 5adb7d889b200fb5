/**
 * Lock layouts: how the lock nodes under one path are named, and so which other clients can share
 * the lock.
 * - `'nestjs-zk-lock'` (the default): this library's own names (queue-entry.ts); no other client
 *   reads them.
 * - `'curator'`: Apache Curator's recipes (`InterProcessMutex`, `InterProcessReadWriteLock`), so a
 *   Java service on Curator and this one exclude each other on one path.
 * - `'kazoo'`: kazoo's recipes (`Lock`, `WriteLock`, `ReadLock`), for Python services.
 *
 * Every layout refuses a path that holds nodes of another known layout: two styles on one path do
 * not exclude each other (each side sorts or skips the other's nodes), so both would hold.
 */
import { InvalidOptionsError, shown } from '../errors.js';

export type LockLayout = 'nestjs-zk-lock' | 'curator' | 'kazoo';

export const DEFAULT_LAYOUT = 'nestjs-zk-lock' satisfies LockLayout;

const LAYOUTS = new Set<string>(['nestjs-zk-lock', 'curator', 'kazoo']);

/** Checks a `layout` option; undefined stays undefined (the default applies). */
export function validateLayout(value: unknown, option = 'layout'): LockLayout | undefined {
  if (value === undefined || LAYOUTS.has(value as string)) return value as LockLayout | undefined;
  throw new InvalidOptionsError(option, `must be 'nestjs-zk-lock' (the default), 'curator' or 'kazoo', got ${shown(value)}`);
}

/** How a queue's parent and its missing ancestors are created, as each layout's own clients do. */
export interface ParentModes {
  readonly parent: 'CONTAINER' | 'PERSISTENT';
  readonly ancestors: 'CONTAINER' | 'PERSISTENT';
}

/** Ours: the lock's parent is a container (reaped when empty); rootPath and above persist. */
export const OWN_PARENTS: ParentModes = { parent: 'CONTAINER', ancestors: 'PERSISTENT' };
/** Curator's `creatingParentContainersIfNeeded`: every missing ancestor is a container. */
export const CURATOR_PARENTS: ParentModes = { parent: 'CONTAINER', ancestors: 'CONTAINER' };
/** kazoo's `ensure_path`: persistent nodes. */
export const KAZOO_PARENTS: ParentModes = { parent: 'PERSISTENT', ancestors: 'PERSISTENT' };

/** Which known style a child name has: the clients whose nodes it is. */
export type NodeStyle = 'nestjs-zk-lock' | 'curator-mutex' | 'curator-read-write' | 'curator-latch' | 'kazoo';

/** Our names (see queue-entry.ts). */
export const OWN_NAME = /^([a-zA-Z])(\d*)-([0-9a-f]+)-([0-9a-z]+)-(\d{10})$/;
/** Curator's InterProcessMutex (`_c_<uuid>-lock-<seq>`, or `lock-<seq>` unprotected); also kazoo nodes named the Curator way. */
const CURATOR_MUTEX_NAME = /lock-\d{10}$/;
/** Curator's InterProcessReadWriteLock (`_c_<uuid>-__READ__<seq>` / `__WRIT__`). */
const CURATOR_RW_NAME = /__(?:READ|WRIT)__\d{10}$/;
/** Curator's LeaderLatch (`_c_<uuid>-latch-<seq>`). */
const CURATOR_LATCH_NAME = /latch-\d{10}$/;
/** kazoo's Lock, WriteLock (`<hex>__lock__<seq>`) and ReadLock (`__rlock__`). */
const KAZOO_NAME = /__r?lock__-?\d{10}$/;

/** The style of a child name; undefined for a name no known client makes. */
export function styleOf(name: string): NodeStyle | undefined {
  if (CURATOR_RW_NAME.test(name)) return 'curator-read-write';
  if (KAZOO_NAME.test(name)) return 'kazoo';
  if (OWN_NAME.test(name)) return 'nestjs-zk-lock';
  if (CURATOR_MUTEX_NAME.test(name)) return 'curator-mutex';
  if (CURATOR_LATCH_NAME.test(name)) return 'curator-latch';
  return undefined;
}

/** What to tell a caller whose path holds nodes of `style`. */
export function styleAdvice(style: NodeStyle): string {
  switch (style) {
    case 'nestjs-zk-lock':
      return "this library's own layout (layout: 'nestjs-zk-lock')";
    case 'curator-mutex':
      return "Curator's InterProcessMutex (layout: 'curator', mode 'exclusive')";
    case 'curator-read-write':
      return "Curator's InterProcessReadWriteLock (layout: 'curator', mode 'read' or 'write')";
    case 'curator-latch':
      return "Curator's LeaderLatch (an election: LockService.elect with layout: 'curator')";
    case 'kazoo':
      return "kazoo's Lock, WriteLock or ReadLock (layout: 'kazoo')";
  }
}

/**
 * Whose semaphore lease pool a path's children are, if any: Curator's `InterProcessSemaphoreV2`
 * keeps `locks` and `leases` under its path; kazoo's `Semaphore` keeps its leases there, named by a
 * bare uuid (hex, no sequence).
 */
export function leasePoolOf(children: readonly string[]): 'curator' | 'kazoo' | undefined {
  if (children.includes('leases')) return 'curator';
  if (children.some((name) => KAZOO_LEASE.test(name))) return 'kazoo';
  return undefined;
}

const KAZOO_LEASE = /^[0-9a-f]{32}$/;

/** A lock path's layout, as its children show it. */
export interface DetectedLayout {
  readonly layout: LockLayout;
  /** A Curator or kazoo semaphore's lease pool, not a lock. */
  readonly pool: boolean;
  /** Set when the path holds nodes of more than one style: each style found (they do not exclude each other). */
  readonly mixed?: readonly NodeStyle[];
}

/** Detection's order of styles, so that a mixed path names the same layout on every read. */
const STYLES: readonly NodeStyle[] = ['nestjs-zk-lock', 'curator-mutex', 'curator-read-write', 'curator-latch', 'kazoo'];

/**
 * The layout a lock path's children are in, by their names (strangers are ignored); a lease pool
 * only when no child is a lock node. Undefined when it is neither.
 */
export function detectLayout(children: readonly string[]): DetectedLayout | undefined {
  const found = new Set(children.map(styleOf));
  const styles = STYLES.filter((style) => found.has(style));
  if (styles.length === 0) {
    const pool = leasePoolOf(children);
    return pool ? { layout: pool, pool: true } : undefined;
  }
  const layout = layoutOfStyle(styles[0]!);
  return styles.length === 1 ? { layout, pool: false } : { layout, pool: false, mixed: styles };
}

/** The layout whose clients make nodes of `style`. */
export function layoutOfStyle(style: NodeStyle): LockLayout {
  return style === 'nestjs-zk-lock' || style === 'kazoo' ? style : 'curator';
}
