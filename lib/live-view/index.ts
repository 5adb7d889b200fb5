export { ZkLockViewModule } from './zk-lock-view.module.js';
export type { ZkLockViewOptions } from './zk-lock-view-options.interface.js';
export type { LockViewData, LockViewEntry, LockViewNode } from './view-model.js';
// The data behind the view, for dashboards of your own (inspectAll works without Nest, on a RecipeRuntime).
export { inspectAll } from '../recipes/inspect-all.js';
export type { LockOverview, InspectAllOptions } from '../recipes/inspect-all.js';
