import { type LockKind, validatePermits } from './lock-kind.js';
import type { HeldLock } from './held-lock.js';
import { type LockInspection, inspectLock } from './inspect.js';
import type { SessionSource } from '../queue/queue.types.js';
import { digestId, strangersWhoMayWrite } from '../zookeeper/zk-acl.js';
import { FairLock, ReadWriteLock, Semaphore } from './queue-lock.js';
import { type LockRecipe, type RecipeAcquireOptions, type RecipeOptions, RecipeRuntime } from './recipe-runtime.js';
import { SimpleLock } from './simple-lock.js';
import { CohortLock, type CohortOptions } from './cohort-lock.js';

export interface RecipeSetOptions extends RecipeOptions {
  /**
   * The cohort queue for exclusive and write locks: callers of this process that want the same
   * lock share one ZooKeeper node and pass the lock between them locally (bounded when others
   * wait). `false` gives every caller its own node.
   * @default {} (on, with CohortLock's defaults)
   */
  cohort?: CohortOptions | false;
}


/** Every recipe of one client, sharing one runtime: what LockService picks from by mode. */
export class RecipeSet {
  readonly runtime: RecipeRuntime;
  readonly fair: FairLock;
  readonly readWrite: ReadWriteLock;
  readonly simple: SimpleLock;
  /** What exclusive and write requests use: the cohort in front of the queue, or the queue itself. */
  readonly exclusive: LockRecipe;
  readonly write: LockRecipe;
  private readonly semaphores = new Map<number, Semaphore>();

  constructor(sessions: SessionSource, options: RecipeSetOptions = {}) {
    this.runtime = new RecipeRuntime(sessions, options);
    this.fair = new FairLock(this.runtime);
    this.readWrite = new ReadWriteLock(this.runtime);
    this.simple = new SimpleLock(this.runtime);
    const cohort = options.cohort ?? {};
    const report = (error: unknown): void => this.runtime.remover.report(error);
    this.exclusive = cohort === false ? this.fair : new CohortLock(this.fair, cohort, report);
    this.write = cohort === false ? this.readWrite.write : new CohortLock(this.readWrite.write, cohort, report);
  }

  /** The recipe for a mode or a semaphore's permits (validated). */
  recipeFor(kind: LockKind): LockRecipe {
    if (kind.permits !== undefined) {
      const permits = validatePermits(kind.permits);
      let semaphore = this.semaphores.get(permits);
      if (!semaphore) {
        semaphore = new Semaphore(this.runtime, { permits });
        this.semaphores.set(permits, semaphore);
      }
      return semaphore;
    }
    switch (kind.mode) {
      case 'read':
        return this.readWrite.read;
      case 'write':
        return this.write;
      case 'simple':
        return this.simple;
      default:
        return this.exclusive;
    }
  }

  /** A read lock under a held write or exclusive lock. */
  downgrade(writeLock: HeldLock, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<HeldLock> {
    return this.readWrite.downgrade(writeLock, options);
  }

  /**
   * Checks who may create or delete lock nodes under rootPath. A missing rootPath is created now,
   * with the configured ACL. Returns what is wrong, or undefined.
   */
  async rootAclProblem(ownerDigest: string | undefined): Promise<string | undefined> {
    const { rootPath } = this.runtime;
    const session = await this.runtime.sessions.session();
    await this.runtime.queue.ensureRoot(session, AbortSignal.timeout(this.runtime.connectWaitMs));
    const current = await session.getAcl(rootPath);
    const strangers = strangersWhoMayWrite(current, ownerDigest && digestId(ownerDigest));
    if (strangers.length === 0) return undefined;
    const who = strangers.map((entry) => `${entry.scheme}:${entry.id}`).join(', ');
    return (
      `the ACL of rootPath ${rootPath} lets ${who} create or delete nodes there, so any such client can ` +
      (ownerDigest
        ? 'take or break locks; set its ACL to the digest identity (setAcl), or use a new rootPath, which is created protected'
        : 'take or break locks; set the digest option so that lock paths are created protected (a new rootPath, or fix the ACL of this one)')
    );
  }

  async inspect(resource: string, signal?: AbortSignal): Promise<LockInspection> {
    return this.withLocalWaiters(await inspectLock(this.runtime, resource, signal));
  }

  /** Adds the callers of this process waiting in its cohort queues, which ZooKeeper does not see. */
  withLocalWaiters(inspection: LockInspection): LockInspection {
    let localWaiters = 0;
    for (const recipe of [this.exclusive, this.write]) {
      if (recipe instanceof CohortLock) localWaiters += recipe.localWaiters(inspection.resource);
    }
    return { ...inspection, localWaiters };
  }
}
