// `nestjs-zk-lock/health`: needs @nestjs/terminus, which the main entry never loads.
export { ZkLockHealthIndicator } from './zk-lock.health.js';
export type { ZkLockHealthOptions, ZkLockHealthDetails } from './zk-lock.health.js';
