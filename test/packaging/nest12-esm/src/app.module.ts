import { Module } from '@nestjs/common';
import { ZkLockModule } from 'nestjs-zk-lock';
import { CounterModule } from './counter.module.js';

const connectionString = process.env.ZK_CONNECT;
if (!connectionString) throw new Error('Set ZK_CONNECT to a ZooKeeper connect string, e.g. 127.0.0.1:2181');

@Module({
  imports: [
    // rootAclCheck: the packaging test's server is a throw-away one without digest identities.
    ZkLockModule.forRoot({ connectionString, rootPath: '/packaging', rootAclCheck: 'off', isGlobal: true }),
    CounterModule,
  ],
})
export class AppModule {}
