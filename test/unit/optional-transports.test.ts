/**
 * The transports' packages stay the application's choice: nothing in lib/ imports them, and they are
 * devDependencies of this package only (for its tests).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TRANSPORT_PACKAGES = ['@nestjs/microservices', '@nestjs/websockets', '@nestjs/platform-socket.io', '@nestjs/platform-ws', 'ws', '@nestjs/graphql', '@nestjs/apollo', '@apollo/server', 'graphql', 'socket.io'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('RPC, WebSocket and GraphQL support adds no dependency', () => {
  it('no file in lib/ imports a transport package, statically or dynamically', () => {
    const offenders = sources(join(root, 'lib')).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return TRANSPORT_PACKAGES.filter((name) => new RegExp(`(from|import\\(|require\\()\\s*['"]${name.replace('/', '\\/')}(/[^'"]*)?['"]`).test(text)).map(
        (name) => `${file.slice(root.length + 1)} imports ${name}`,
      );
    });
    expect(offenders).toEqual([]);
  });

  it('the transport packages are devDependencies only', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      expect(Object.keys(manifest[field] ?? {}).filter((name) => TRANSPORT_PACKAGES.includes(name))).toEqual([]);
    }
    expect(Object.keys(manifest.devDependencies ?? {})).toEqual(expect.arrayContaining(['@nestjs/microservices', '@nestjs/websockets', '@nestjs/graphql']));
  });
});
