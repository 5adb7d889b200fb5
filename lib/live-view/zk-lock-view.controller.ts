import {
  Controller,
  Get,
  Header,
  Inject,
  type OnModuleInit,
  ServiceUnavailableException,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InvalidOptionsError } from '../errors.js';
import { LockService } from '../service/lock.service.js';
import { PAGE_HEADERS, renderPage } from './page.js';
import { type LockViewData, toViewData } from './view-model.js';
import type { ZkLockViewOptions } from './zk-lock-view-options.interface.js';

export type ResolvedViewOptions = Required<ZkLockViewOptions>;

/**
 * The controller for one registration: its route comes from the options, so the class is made per
 * register() call. It reads only through LockService, found wherever ZkLockModule was imported.
 */
export function createViewController(options: ResolvedViewOptions): Type<unknown> {
  const page = renderPage(options.refreshMs);

  @Controller(options.path)
  @UseGuards(...options.guards)
  class ZkLockViewController implements OnModuleInit {
    private locks: LockService | undefined;

    constructor(@Inject(ModuleRef) private readonly moduleRef: ModuleRef) {}

    onModuleInit(): void {
      try {
        this.locks = this.moduleRef.get(LockService, { strict: false });
      } catch {
        throw new InvalidOptionsError(
          'ZkLockViewModule',
          'found no LockService: import ZkLockModule.forRoot(...) (or forRootAsync) in the same application',
        );
      }
    }

    @Get()
    @Header('Content-Type', PAGE_HEADERS['Content-Type']!)
    @Header('Content-Security-Policy', PAGE_HEADERS['Content-Security-Policy']!)
    @Header('Cache-Control', PAGE_HEADERS['Cache-Control']!)
    @Header('X-Content-Type-Options', PAGE_HEADERS['X-Content-Type-Options']!)
    page(): string {
      return page;
    }

    @Get('data')
    @Header('Cache-Control', 'no-store')
    async data(): Promise<LockViewData> {
      try {
        const overview = await this.locks!.inspectAll({ signal: AbortSignal.timeout(options.readTimeoutMs), paths: options.paths, scan: options.scan });
        const { tls, server, members } = this.locks!.sessionInfo();
        return { ...toViewData(overview), tls, server: server ?? null, members };
      } catch (error) {
        throw new ServiceUnavailableException(
          `Could not read the locks from ZooKeeper: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    }
  }
  return ZkLockViewController;
}
