import { type DynamicModule, Module } from '@nestjs/common';
import { ZkLockModule } from '../lib/index.js';
import { COUNTER_STORE, CounterService } from './counter.service.js';
import { CounterStore } from './counter.store.js';

@Module({})
export class AppModule {
  static register(options: { connectionString: string; counterFile: string }): DynamicModule {
    return {
      module: AppModule,
      imports: [ZkLockModule.forRoot({ connectionString: options.connectionString, rootPath: '/demo-locks' })],
      providers: [CounterService, { provide: COUNTER_STORE, useValue: new CounterStore(options.counterFile) }],
    };
  }
}
