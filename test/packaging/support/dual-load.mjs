// Loads the installed nestjs-zk-lock both ways in one process, `import` and `require`, and checks
// that there is one module instance behind them (no dual-package hazard):
//   - every export of `.` and `/testing` is the very same value under both conditions, so a class
//     from one is the class from the other (instanceof works across them);
//   - an error thrown through one is an instance of the other's error classes;
//   - one LockService registry: a method decorated with require()'s @DistributedLock runs on the
//     LockService of an application built from import()'s ZkLockTestingModule;
//   - one lock-context store: inside that decorated method, import()'s LockService sees the lock the
//     decorator took as held by the same context (a reentrant join, not a second waiter).
// `/health` needs @nestjs/terminus, which the apps do not install; it is built the same way.
// Run from an application directory: node dual-load.mjs
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.cwd(), 'package.json'));
const { Module } = await import('@nestjs/common');
const { NestFactory } = await import('@nestjs/core');

const loaded = {};
for (const entry of ['nestjs-zk-lock', 'nestjs-zk-lock/testing']) {
  const esm = await import(entry);
  const cjs = require(entry);
  const esmNames = Object.keys(esm).filter((name) => name !== 'default' && name !== 'module.exports').sort();
  const cjsNames = Object.keys(cjs).filter((name) => name !== '__esModule').sort();
  assert.deepEqual(esmNames, cjsNames, `${entry}: import and require give different export names`);
  for (const name of cjsNames) assert.ok(esm[name] === cjs[name], `${entry}: ${name} differs between import and require`);
  assert.match(require.resolve(entry), /\.js$/, `${entry}: require resolves to ${require.resolve(entry)}, not the CommonJS build`);
  loaded[entry] = { esm, cjs, count: cjsNames.length };
}
const { esm, cjs } = loaded['nestjs-zk-lock'];
const testing = loaded['nestjs-zk-lock/testing'];

let thrown;
try {
  esm.DistributedLock(''); // an empty resource name: refused at once
} catch (error) {
  thrown = error;
}
assert.ok(thrown instanceof cjs.InvalidOptionsError && thrown instanceof cjs.ZkLockError, 'an error from import() is not an instance of require()\'s classes');

// No decorator syntax in a .mjs file: apply @DistributedLock as TypeScript would.
class NightlyJob {
  async run(inside) {
    return inside();
  }
}
const descriptor = Object.getOwnPropertyDescriptor(NightlyJob.prototype, 'run');
Object.defineProperty(NightlyJob.prototype, 'run', cjs.DistributedLock('dual-load:job')(NightlyJob.prototype, 'run', descriptor) ?? descriptor);

class DualLoadModule {}
Module({ imports: [testing.esm.ZkLockTestingModule.forRoot({ isGlobal: true })] })(DualLoadModule);
const app = await NestFactory.createApplicationContext(DualLoadModule, { logger: false });
try {
  const locks = app.get(esm.LockService);
  assert.ok(locks === app.get(cjs.LockService), 'the application has a different LockService under each condition');
  // NightlyJob belongs to no application: the decorator asks the registry for the one running LockService.
  const joined = await new NightlyJob().run(() => locks.withLock('dual-load:job', (lock) => lock.fencingToken, { waitTimeoutMs: 0 }));
  assert.equal(typeof joined, 'string', 'the decorated method did not hold the lock');
} finally {
  await app.close();
}

console.log(
  `dual load: import and require give the same ${loaded['nestjs-zk-lock'].count} exports of nestjs-zk-lock and ${testing.count} of /testing;` +
    ' errors are instances across them; one LockService registry; one lock-context store',
);
