import { Module } from '@nestjs/common';
import { ZkLockModule } from 'nestjs-zk-lock';
import { AppController } from './app.controller';
import { AppService } from './app.service';

@Module({
  imports: [
    ZkLockModule.forRoot({
      connectionString: process.env.ZK_CONNECT ?? '127.0.0.1:2181',
      // The packaging test's server is a throw-away one without digest identities.
      rootAclCheck: 'off',
    }),
  ],
  controllers: [AppController],
  providers: [AppService],
})
export class AppModule {}
