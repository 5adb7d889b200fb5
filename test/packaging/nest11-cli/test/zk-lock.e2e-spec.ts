import { Controller, INestApplication, Post } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { DistributedLock, LockService } from 'nestjs-zk-lock';
import request from 'supertest';
import { App } from 'supertest/types';
import { AppModule } from './../src/app.module';

let stock = 100;

@Controller('stock')
class StockController {
  // A read-modify-write with an await in between: without the lock, concurrent requests lose updates.
  @Post('take')
  @DistributedLock('stock', { waitTimeoutMs: 30_000 })
  async take(): Promise<{ left: number }> {
    const read = stock;
    await new Promise((resolve) => setImmediate(resolve));
    stock = read - 1;
    return { left: stock };
  }

  @Post('take-now')
  @DistributedLock('stock', { waitTimeoutMs: 0 })
  takeNow(): { left: number } {
    stock -= 1;
    return { left: stock };
  }
}

// Needs a ZooKeeper at ZK_CONNECT (default 127.0.0.1:2181), as AppModule does.
describe('@DistributedLock over HTTP on a real ZooKeeper (e2e)', () => {
  let app: INestApplication<App>;

  beforeAll(async () => {
    const moduleFixture: TestingModule = await Test.createTestingModule({
      imports: [AppModule],
      controllers: [StockController],
    }).compile();

    app = moduleFixture.createNestApplication();
    await app.init();
  }, 30_000);

  afterAll(async () => {
    await app.close();
  });

  it('serialises concurrent requests: no update is lost', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        request(app.getHttpServer()).post('/stock/take').expect(201),
      ),
    );
    const left = responses.map((r) => (r.body as { left: number }).left);
    expect(left.sort((a, b) => a - b)).toEqual([
      90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
    ]);
  });

  it('answers 409 Conflict while another holder has the lock', async () => {
    const held = await app.get(LockService).acquire('stock');
    try {
      const response = await request(app.getHttpServer())
        .post('/stock/take-now')
        .expect(409);
      expect(response.body).toMatchObject({
        statusCode: 409,
        resource: 'stock',
      });
    } finally {
      await held.release();
    }
    await request(app.getHttpServer()).post('/stock/take-now').expect(201);
  });
});
