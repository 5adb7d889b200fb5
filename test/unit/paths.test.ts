import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, InvalidResourceNameError } from '../../lib/errors.js';
import { MAX_RESOURCE_BYTES, decodeResource, encodeResource, validateRootPath } from '../../lib/zookeeper/paths.js';
import { randomName, seeded } from '../support/names.js';

/** What ZooKeeper's PathUtils refuses inside a path component. */
const ZK_FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff/]/;

describe('resource names become one safe, injective path component', () => {
  it('keeps ordinary names readable', () => {
    expect(encodeResource('orders:42')).toBe('orders:42');
    expect(encodeResource('report.daily-2026_11')).toBe('report.daily-2026_11');
  });

  it('encodes separators, NUL, control characters, percent signs and relative names', () => {
    for (const name of ['a/b', '/', '../../zookeeper', '.', '..', 'x\u0000y', 'tab\there', '100%', 'line\nbreak']) {
      const encoded = encodeResource(name);
      expect(encoded).not.toMatch(ZK_FORBIDDEN);
      expect(encoded).not.toBe('.');
      expect(encoded).not.toBe('..');
      expect(decodeResource(encoded)).toBe(name);
    }
    expect(encodeResource('..')).toBe('%2E%2E');
    expect(encodeResource('a/b')).toBe('a%2Fb');
  });

  it('never maps two different names to the same component (10,000 generated names)', () => {
    const random = seeded(7);
    const seen = new Map<string, string>();
    for (let i = 0; i < 10_000; i++) {
      const name = randomName(random);
      let encoded: string;
      try {
        encoded = encodeResource(name);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidResourceNameError);
        continue;
      }
      expect(encoded).not.toMatch(ZK_FORBIDDEN);
      expect(decodeResource(encoded)).toBe(name);
      const previous = seen.get(encoded);
      if (previous !== undefined) expect(previous).toBe(name);
      seen.set(encoded, name);
    }
    expect(seen.size).toBeGreaterThan(9000);
  });

  it('refuses what cannot be encoded, saying why', () => {
    expect(() => encodeResource('')).toThrow(/must not be empty/);
    expect(() => encodeResource(42)).toThrow(/must be a string/);
    expect(() => encodeResource('a\ud800b')).toThrow(/lone UTF-16 surrogate/);
    const huge = 'x'.repeat(10 * 1024);
    const error = (() => {
      try {
        encodeResource(huge);
      } catch (e) {
        return e as InvalidResourceNameError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidResourceNameError);
    expect(error!.message).toMatch(new RegExp(`10240 bytes in UTF-8 and the limit is ${MAX_RESOURCE_BYTES}`));
    expect(error!.message.length).toBeLessThan(400);
    expect(() => encodeResource('é'.repeat(MAX_RESOURCE_BYTES / 2))).not.toThrow();
  });
});

describe('rootPath validation', () => {
  it('accepts absolute paths and refuses the rest, naming the option', () => {
    expect(validateRootPath('/locks')).toBe('/locks');
    expect(validateRootPath('/app/locks')).toBe('/app/locks');
    for (const bad of ['locks', '/', '/locks/', '/a//b', '/a/../b', '/zookeeper/x', '/a\u0000b', 7]) {
      expect(() => validateRootPath(bad)).toThrow(InvalidOptionsError);
      expect(() => validateRootPath(bad)).toThrow(/"rootPath"/);
    }
  });
});
