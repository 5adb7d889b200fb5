/** The HTTP workload's app: prints `ready <port>` once it serves on 127.0.0.1:PORT. */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { BenchAppModule } from './bench-app.module.js';

const app = await NestFactory.create(BenchAppModule, { logger: ['error', 'warn'], abortOnError: false });
app.enableShutdownHooks();
const port = Number(process.env.PORT);
await app.listen(port, '127.0.0.1');
console.log(`ready ${port}`);
