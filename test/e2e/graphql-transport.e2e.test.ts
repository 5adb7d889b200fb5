/**
 * Apollo code-first (@nestjs/apollo, @apollo/server) with @DistributedLock resolvers, real HTTP
 * queries, on a real ZooKeeper: busy comes back as `errors[0].extensions` with `code: 'LOCK_BUSY'`
 * and the resource, and the server logs no error for it.
 */
import 'reflect-metadata';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { ForbiddenException, type INestApplication } from '@nestjs/common';
import { Args, GraphQLModule, Mutation, Query, Resolver } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib/index.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { STEADY_SESSION, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

@Resolver()
class ReportsResolver {
  constructor(private readonly locks: LockService) {}

  @Mutation(() => String)
  @DistributedLock((id: string) => `reports:${id}`, { waitTimeoutMs: 0 })
  async rebuildReport(@Args('id') id: string): Promise<string> {
    return this.locks.heldLock(`reports:${id}`)?.fencingToken ?? 'no lock';
  }

  @Query(() => String)
  @DistributedLock('reports:42', { waitTimeoutMs: 0 })
  refuse(): string {
    throw new ForbiddenException('the handler said no');
  }
}

interface GraphQLAnswer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

describe('@DistributedLock in an Apollo GraphQL resolver, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const logger = new RecordingLogger();
  let app: INestApplication;
  let url: string;
  let locks: LockService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath: uniqueRoot('graphql'), rootAclCheck: 'off' }),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
      ],
      providers: [ReportsResolver],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/graphql`;
    locks = app.get(LockService);
  });
  afterAll(async () => {
    await app?.close();
  });

  const query = async (text: string): Promise<GraphQLAnswer> => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: text }) });
    return (await response.json()) as GraphQLAnswer;
  };

  it('a free lock: the resolver runs under it', async () => {
    const answer = await query('mutation { rebuildReport(id: "42") }');
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.rebuildReport).toMatch(/^\d{40}$/);
  });

  it('busy: errors[0].extensions has code LOCK_BUSY and the resource, and the server logs no error', async () => {
    const held = await locks.acquire('reports:42'); // plain code, outside any request: its own holder
    let answer: GraphQLAnswer;
    try {
      answer = await query('mutation { rebuildReport(id: "42") }');
    } finally {
      await held.release();
    }
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors![0]!.message).toBe('The resource "reports:42" is locked by another caller; try again later.');
    expect(answer.errors![0]!.extensions).toMatchObject({ code: 'LOCK_BUSY', resource: 'reports:42' });
    expect(answer.data).toBeNull();
    expect(logger.errors).toEqual([]);
  });

  it("a resolver's own HttpException passes through as Nest maps it", async () => {
    const answer = await query('{ refuse }');
    expect(answer.errors![0]!.message).toBe('the handler said no');
    expect(answer.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN' });
  });
});
