import { createIfMissing } from '../zookeeper/session-retry.js';
import { pathPrefixes } from '../zookeeper/paths.js';
import { ZkNoNodeError } from '../zookeeper/zk-errors.js';
import type { ZkAcl } from '../zookeeper/zk-acl.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import type { ParentModes } from './layouts.js';

/**
 * The one place that creates the parents of lock nodes: a queue's parent, a simple lock's rootPath,
 * a lease pool's leases (and kazoo's pool node with its permit count), a tick record and its folders. The rule: rootPath and every path above it are persistent in every layout;
 * below rootPath a layout's own modes apply (ours: the lock's parent is a container, reaped by
 * ZooKeeper when empty; Curator's: containers; kazoo's: persistent). Every create carries the ACL.
 */
export class LockParents {
  /** rootPath and its ancestors, `/a`, `/a/b`, ... */
  private readonly rootAncestors: readonly string[];

  constructor(
    rootPath: string,
    /** The ACL given to every path created here; open when absent. */
    private readonly acl: readonly ZkAcl[] | undefined,
  ) {
    this.rootAncestors = pathPrefixes(rootPath);
  }

  /**
   * Creates `parent` with `modes.parent` (holding `data`, empty by default), and its missing
   * ancestors only when that fails for want of them: a new lock name usually costs the one create.
   * Resolves true when this call created `parent`, false when it was there.
   */
  async ensure(session: ZkSessionApi, parent: string, modes: ParentModes, stop: AbortSignal, data?: string): Promise<boolean> {
    try {
      return await createIfMissing(session, parent, this.modeOf(parent, modes.parent), stop, this.acl, data);
    } catch (error) {
      if (!(error instanceof ZkNoNodeError)) throw error;
    }
    await this.ensureAncestors(session, parent, modes.ancestors, stop);
    return createIfMissing(session, parent, this.modeOf(parent, modes.parent), stop, this.acl, data);
  }

  /** Creates the missing ancestors of `path` (not `path` itself), with `mode` below rootPath. */
  async ensureAncestors(session: ZkSessionApi, path: string, mode: 'CONTAINER' | 'PERSISTENT', stop: AbortSignal): Promise<void> {
    for (const ancestor of pathPrefixes(path).slice(0, -1)) await createIfMissing(session, ancestor, this.modeOf(ancestor, mode), stop, this.acl);
  }

  /** Creates rootPath and its ancestors where missing (persistent). */
  async ensureRoot(session: ZkSessionApi, stop: AbortSignal): Promise<void> {
    for (const path of this.rootAncestors) await createIfMissing(session, path, 'PERSISTENT', stop, this.acl);
  }

  /** The rootPath rule: rootPath and above persist; a layout's own mode applies below it. */
  private modeOf(path: string, layoutMode: 'CONTAINER' | 'PERSISTENT'): 'CONTAINER' | 'PERSISTENT' {
    return this.rootAncestors.includes(path) ? 'PERSISTENT' : layoutMode;
  }
}
