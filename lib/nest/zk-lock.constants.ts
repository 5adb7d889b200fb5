/** reflect-metadata key under which @DistributedLock stores its spec on the method. */
export const DISTRIBUTED_LOCK_METADATA = 'ZK_LOCK:DISTRIBUTED_LOCK';
/** reflect-metadata key under which @Leader stores its spec on the method. */
export const LEADER_METADATA = 'ZK_LOCK:LEADER';
/** reflect-metadata key under which @OnLeadership stores its spec on the method. */
export const ON_LEADERSHIP_METADATA = 'ZK_LOCK:ON_LEADERSHIP';
