import { type DynamicModule, Inject, Injectable, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LockService } from '../service/lock.service.js';
import { ZkLockModule } from '../nest/zk-lock.module.js';
import { InMemoryConnection } from './in-memory/in-memory-connection.js';
import { InMemoryZooKeeper, type InMemoryLockServiceOptions } from './in-memory/in-memory-zookeeper.js';

/** Options of ZkLockTestingModule.forRoot. */
export type ZkLockTestingModuleOptions = InMemoryLockServiceOptions & {
  /** The in-memory ZooKeeper to join (to contend with other apps or services). @default a new one */
  zookeeper?: InMemoryZooKeeper;
  /** Makes LockService visible in every module, as ZkLockModule's isGlobal. @default false */
  isGlobal?: boolean;
};

/** Ties the app's LockService to its client, and closes the client once the app has released everything. */
@Injectable()
class InMemoryClientLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(InMemoryZooKeeper) private readonly zookeeper: InMemoryZooKeeper,
    @Inject(InMemoryConnection) private readonly connection: InMemoryConnection,
    @Inject(LockService) private readonly locks: LockService,
  ) {}

  onModuleInit(): void {
    this.zookeeper.adopt(this.locks, this.connection);
  }

  // Runs after every beforeApplicationShutdown, so LockService has released its locks by now.
  onApplicationShutdown(): void {
    this.connection.close();
  }
}

/**
 * ZkLockModule on an in-memory ZooKeeper, for tests of a Nest application: import
 * `ZkLockTestingModule.forRoot()` where the application imports `ZkLockModule.forRoot(...)` (or
 * override that import). @DistributedLock, LockService and the interceptor are the real ones.
 * `app.get(InMemoryZooKeeper)` reaches the server (to expire the app's session: `expireSession(locks)`),
 * `app.get(InMemoryConnection)` the app's client.
 */
@Module({})
export class ZkLockTestingModule {
  static forRoot(options: ZkLockTestingModuleOptions = {}): DynamicModule {
    const { zookeeper = new InMemoryZooKeeper(), isGlobal = false, sessionTimeoutMs, connectTimeoutMs, digest, ...moduleOptions } = options;
    const connection = zookeeper.connect({ sessionTimeoutMs, connectTimeoutMs, digest });
    const lockModule = ZkLockModule.forRoot({ rootAclCheck: 'off', ...moduleOptions, connection, isGlobal });
    return {
      module: ZkLockTestingModule,
      global: isGlobal,
      imports: [lockModule],
      providers: [
        { provide: InMemoryZooKeeper, useValue: zookeeper },
        { provide: InMemoryConnection, useValue: connection },
        InMemoryClientLifecycle,
      ],
      exports: [lockModule, InMemoryZooKeeper, InMemoryConnection],
    };
  }
}
