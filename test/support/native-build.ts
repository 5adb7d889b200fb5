/**
 * The repository's native builds, for the tests that copy or package them. A missing build is a
 * broken checkout, not a reason to skip: these throw, saying what to run.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** The addon `npm ci` built (native/build/Release/zk_native.node). */
export const BUILT_ADDON = join(repo, 'native', 'build', 'Release', 'zk_native.node');
/** The ZooKeeper C client `npm ci` built for the addon (its libtool archive). */
export const BUILT_C_CLIENT = join(repo, 'native', 'c-client', '.libs', 'libzookeeper_st.la');

/** Throws unless `file` (one of the builds above) exists. */
export function requireBuild(file: string): string {
  if (!existsSync(file)) {
    throw new Error(`${file} is missing: this test needs the native build. Run \`npm ci\` (or \`npm rebuild nestjs-zk-lock\`) in ${repo}, and read its output if the build failed.`);
  }
  return file;
}
