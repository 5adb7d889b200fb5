import { InvalidOptionsError, InvalidResourceNameError, shown } from '../errors.js';

/** Longest resource name accepted, in UTF-8 bytes. Longer names are refused, never truncated or hashed. */
export const MAX_RESOURCE_BYTES = 512;

/**
 * Characters kept as they are in a path component. Everything else, `%` included, is percent-encoded
 * from its UTF-8 bytes, so the encoding is injective (decoding gives the name back) and the result
 * holds only characters ZooKeeper accepts in a path: no `/`, no NUL, no control or private-use code.
 */
const SAFE = /^[A-Za-z0-9_\-.:@+=,;!~*'()]$/;

/**
 * Turns a user's resource name into one path component below rootPath.
 * `.` and `..` as a whole name would be relative paths to ZooKeeper, so their dots are encoded too.
 * @throws InvalidResourceNameError for a non-string, an empty name, a lone surrogate, or a name over
 *   {@link MAX_RESOURCE_BYTES} bytes.
 */
export function encodeResource(resource: unknown): string {
  if (typeof resource !== 'string') {
    throw new InvalidResourceNameError(resource, 'a resource name must be a string');
  }
  if (resource.length === 0) {
    throw new InvalidResourceNameError(resource, 'a resource name must not be empty');
  }
  if (!resource.isWellFormed()) {
    throw new InvalidResourceNameError(
      resource,
      'it contains a lone UTF-16 surrogate, which has no UTF-8 form; pass well-formed Unicode text',
    );
  }
  const bytes = Buffer.byteLength(resource, 'utf8');
  if (bytes > MAX_RESOURCE_BYTES) {
    throw new InvalidResourceNameError(
      resource,
      `it is ${bytes} bytes in UTF-8 and the limit is ${MAX_RESOURCE_BYTES}; ` +
        'use a shorter key (for example a hash of the long one, if collisions are acceptable to you)',
    );
  }
  let out = '';
  const allDots = /^\.+$/.test(resource);
  for (const char of resource) {
    if (SAFE.test(char) && !(allDots && char === '.')) {
      out += char;
    } else {
      for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

/** The inverse of {@link encodeResource}, for introspection and tests. */
export function decodeResource(component: string): string {
  return decodeURIComponent(component);
}

/**
 * Checks a root path: absolute, no trailing slash, no empty, `.` or `..` segments, and only characters
 * ZooKeeper accepts.
 * @throws InvalidOptionsError naming `rootPath`.
 */
export function validateRootPath(rootPath: unknown, option = 'rootPath'): string {
  const problem = pathProblem(rootPath, 'such as "/locks"');
  if (problem) throw new InvalidOptionsError(option, problem);
  return rootPath as string;
}

/**
 * Checks a lock's exact ZooKeeper path (`zkPath`) as strictly as a root path, and its length as a
 * resource name's.
 * @throws InvalidResourceNameError saying what is wrong.
 */
export function validateZkPath(zkPath: unknown): string {
  const problem = pathProblem(zkPath, 'such as "/services/billing/locks/invoice"');
  if (problem) throw new InvalidResourceNameError(zkPath, `zkPath ${problem}`);
  const bytes = Buffer.byteLength(zkPath as string, 'utf8');
  if (bytes > MAX_ZK_PATH_BYTES) {
    throw new InvalidResourceNameError(zkPath, `zkPath is ${bytes} bytes in UTF-8 and the limit is ${MAX_ZK_PATH_BYTES}`);
  }
  return zkPath as string;
}

/** Longest `zkPath` accepted, in UTF-8 bytes (a resource name's limit and room for a root). */
export const MAX_ZK_PATH_BYTES = 1024;

/** What is wrong with an absolute path given by a caller, or undefined. */
function pathProblem(path: unknown, example: string): string | undefined {
  if (typeof path !== 'string' || !path.startsWith('/')) return `must be an absolute ZooKeeper path ${example}, got ${shown(path)}`;
  if (path === '/') return `must not be "/": give it a path of its own, ${example}`;
  if (path.endsWith('/')) return `must not end with "/", got ${shown(path)}`;
  if (!path.isWellFormed()) return `contains a lone UTF-16 surrogate, which has no UTF-8 form: ${shown(path)}`;
  for (const segment of path.slice(1).split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return `has an empty, "." or ".." segment: ${shown(path)}`;
    if (/[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(segment)) {
      return `contains a character ZooKeeper refuses in paths: ${shown(path)}`;
    }
  }
  if (path === '/zookeeper' || path.startsWith('/zookeeper/')) return 'must not be under /zookeeper, which ZooKeeper reserves for itself';
  return undefined;
}

/** The ancestors of an absolute path, shortest first: `/a/b/c` gives `/a`, `/a/b`, `/a/b/c`. */
export function pathPrefixes(path: string): string[] {
  const parts = path.slice(1).split('/');
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`);
}
