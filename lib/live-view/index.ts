export { ZkLockViewModule } from './zk-lock-view.module.js';
export type { ZkLockViewOptions } from './zk-lock-view-options.interface.js';
export type { LockViewData, LockViewEntry, LockViewNode } from './view-model.js';
export type { LockOverview, InspectAllOptions } from '../recipes/inspect-all.js';
