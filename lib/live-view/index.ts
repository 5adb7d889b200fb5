// `nestjs-zk-lock/live-view`: a page (and JSON) of the locks under rootPath, for a Nest app.
export { ZkLockViewModule } from './zk-lock-view.module.js';
export type { ZkLockViewOptions } from './zk-lock-view-options.interface.js';
export type { LockViewData, LockViewEntry, LockViewNode } from './view-model.js';
