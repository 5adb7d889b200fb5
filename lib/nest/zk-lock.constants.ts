/** reflect-metadata key under which @DistributedLock stores its spec on the method. */
export const DISTRIBUTED_LOCK_METADATA = 'ZK_LOCK:DISTRIBUTED_LOCK';
