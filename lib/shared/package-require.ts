import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * A `require` resolving from this package's files (the native addon; the optional peers the app
 * installed: @opentelemetry/api, @nestjs/schedule's `cron`), in either module system. The published build is CommonJS,
 * where `__filename` is this file (Vitest provides it too). This repository also compiles lib/ to ES
 * modules (sample app, benchmarks, fault suite), which have no `__filename`; `import.meta` would be a
 * syntax error in the CommonJS build, so there the file is read from V8's call site instead.
 */
let here: { file: string; require: NodeJS.Require } | undefined;
/** Computed on first use, so importing the library never fails (see loadNativeModule in zookeeper/native-client). */
export function resolveHere(): { file: string; require: NodeJS.Require } {
  if (here) return here;
  const file = typeof __filename === 'string' ? __filename : fileOfThisModule();
  here = { file, require: createRequire(file) };
  return here;
}

function fileOfThisModule(): string {
  const original = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = (_error, callSites) => callSites;
    const file = (new Error().stack as unknown as NodeJS.CallSite[] | undefined)?.[0]?.getFileName();
    if (file?.startsWith('file:')) return fileURLToPath(file);
    if (!file) {
      throw new Error(
        'nestjs-zk-lock cannot tell which file lib/shared/package-require was loaded from, so it cannot find the ' +
          'ZooKeeper addon or optional peers. Load the published CommonJS build (it has __filename), or report this with the name of your bundler or loader.',
      );
    }
    return file;
  } finally {
    Error.prepareStackTrace = original;
  }
}
