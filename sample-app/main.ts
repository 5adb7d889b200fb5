/**
 * One instance of the sample app. Several run side by side on one ZooKeeper and one counter file;
 * `demo.ts` starts three. Prints `ready <INSTANCE> <PORT>` once it serves.
 */
import 'reflect-metadata';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

// abortOnError false: a failed start-up (ZooKeeper unreachable, a variable missing) then exits with
// the error instead of process.abort() and a core dump.
const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'], abortOnError: false });
// SIGTERM closes the app, so the locks it holds are released at once instead of when the session expires.
app.enableShutdownHooks();
const config = app.get(ConfigService);
const port = Number(config.getOrThrow<string>('PORT'));
await app.listen(port, '127.0.0.1');
console.log(`ready ${config.getOrThrow<string>('INSTANCE')} ${port}`);
