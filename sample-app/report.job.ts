import { appendFile } from 'node:fs/promises';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Cron, CronExpression } from '@nestjs/schedule';
import { DistributedLock } from '../lib/index.js';

/** A job every instance schedules but only one may run each second. */
@Injectable()
export class ReportJob {
  private readonly logFile: string;
  private readonly instance: string;

  constructor(config: ConfigService) {
    this.logFile = config.getOrThrow<string>('CRON_LOG_FILE');
    this.instance = config.getOrThrow<string>('INSTANCE');
  }

  @Cron(CronExpression.EVERY_SECOND)
  @DistributedLock('cron:report', { onBusy: 'skip' })
  async report(): Promise<void> {
    const second = Math.floor(Date.now() / 1000);
    await appendFile(this.logFile, `${second} ${this.instance}\n`);
  }
}
