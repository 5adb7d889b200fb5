import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { LockService } from '../service/lock.service.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { DISTRIBUTED_LOCK_METADATA } from './zk-lock.constants.js';
import type { DistributedLockSpec } from './distributed-lock.options.js';
import { adoptSchedule, scheduleOf } from './scheduled-method.js';
import { providerMethods } from './provider-methods.js';

/**
 * At start-up, tells the registry which providers and controllers of this application have
 * @DistributedLock methods, so their calls use this application's LockService, and checks each
 * method's tick options against its @Cron or @Interval (start-up fails with InvalidOptionsError).
 */
@Injectable()
export class DistributedLockExplorer implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly locks: LockService,
  ) {}

  onModuleInit(): void {
    const guarded = new Set<object>();
    for (const { instance, method } of providerMethods(this.discovery, this.scanner, [DISTRIBUTED_LOCK_METADATA])) {
      guarded.add(instance);
      const spec = Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, method) as DistributedLockSpec;
      adoptSchedule(spec, scheduleOf(method, spec.method));
    }
    lockServiceRegistry.start(this.locks, guarded);
  }

  onApplicationShutdown(): void {
    lockServiceRegistry.stop(this.locks);
  }

}
