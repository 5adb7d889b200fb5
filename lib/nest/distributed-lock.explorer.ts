import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { LockService } from '../service/lock.service.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { DISTRIBUTED_LOCK_METADATA } from './zk-lock.constants.js';

/**
 * At start-up, tells the registry which providers and controllers of this application have
 * @DistributedLock methods, so their calls use this application's LockService.
 */
@Injectable()
export class DistributedLockExplorer implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly locks: LockService,
  ) {}

  onModuleInit(): void {
    const guarded = [...this.discovery.getProviders(), ...this.discovery.getControllers()]
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is object => typeof instance === 'object' && instance !== null && this.hasGuardedMethod(instance));
    lockServiceRegistry.start(this.locks, guarded);
  }

  onApplicationShutdown(): void {
    lockServiceRegistry.stop(this.locks);
  }

  private hasGuardedMethod(instance: object): boolean {
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
    if (!prototype) return false;
    return this.scanner
      .getAllMethodNames(prototype)
      .some((name) => Reflect.hasMetadata(DISTRIBUTED_LOCK_METADATA, prototype[name] as object));
  }
}
