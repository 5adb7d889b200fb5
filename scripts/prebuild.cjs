'use strict';
/**
 * Puts the addon built in this repository (native/build/Release/zk_native.node) into a package as its
 * prebuilt binary: <package>/native/prebuilds/linux-x64/zk_native.node, with zk_native.json beside it
 * saying what it needs (see native/prebuilt.cjs). Runs at pack time (`prepack`; the packaging test
 * calls it on its staging copy), and only on linux-x64 with glibc: a tarball packed elsewhere ships
 * no prebuilt binary, and its users build from source.
 *
 * usage: node scripts/prebuild.cjs [<package dir>]   (default: this repository; writes native/prebuilds)
 *        node scripts/prebuild.cjs --remove          (postpack: removes this repository's native/prebuilds)
 *
 * Fails (exit 1) on linux-x64 glibc when there is no build, the build is older than its sources, or it
 * does not load: a tarball must not ship without its binary, or with a stale one.
 */
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { currentRuntime, platformKey, compareVersions, findPrebuilt, describe } = require('../native/prebuilt.cjs');

const repo = path.resolve(__dirname, '..');
const built = path.join(repo, 'native', 'build', 'Release', 'zk_native.node');

function say(message) {
  console.log(`prebuild: ${message}`);
}
function fail(message) {
  console.error(`prebuild: ${message}`);
  process.exit(1);
}

if (process.argv[2] === '--remove') {
  fs.rmSync(path.join(repo, 'native', 'prebuilds'), { recursive: true, force: true });
  process.exit(0);
}

const packageDir = path.resolve(process.argv[2] || repo);
const prebuilds = path.join(packageDir, 'native', 'prebuilds');
fs.rmSync(prebuilds, { recursive: true, force: true });

const runtime = currentRuntime();
if (platformKey(runtime) !== 'linux-x64' || runtime.libc !== 'glibc') {
  say(`this machine is ${platformKey(runtime)}${runtime.libc ? ` (${runtime.libc})` : ''}: prebuilt binaries are made on linux-x64 with glibc only, so this tarball ships none (its users build the addon from source)`);
  process.exit(0);
}

if (!fs.existsSync(built)) {
  fail(`there is no build to ship at ${built}: build it first (\`node native/install.cjs\`, or \`npm ci\`)`);
}
const sources = [path.join(repo, 'native', 'binding.gyp'), ...fs.readdirSync(path.join(repo, 'native', 'src')).map((f) => path.join(repo, 'native', 'src', f))];
const newer = sources.filter((source) => fs.statSync(source).mtimeMs > fs.statSync(built).mtimeMs);
if (newer.length > 0) {
  fail(`${built} is older than ${newer.map((f) => path.relative(repo, f)).join(', ')}: rebuild it (\`NESTJS_ZK_LOCK_BUILD_ADDON=1 node native/install.cjs\`)`);
}

const binary = fs.readFileSync(built);
const text = binary.toString('latin1');
/** The highest version among the symbol versions the binary references with this prefix (GLIBC_2.28...). */
function highest(prefix) {
  const versions = [...new Set(text.match(new RegExp(`${prefix}_[0-9]+(\\.[0-9]+)*`, 'g')) || [])].map((v) => v.slice(prefix.length + 1));
  return versions.sort(compareVersions).pop();
}
// A Node-API addon exports napi_register_module_v1 (NAPI_MODULE / node-addon-api's NODE_API_MODULE);
// a nan addon registers itself for one NODE_MODULE_VERSION.
const napi = text.includes('napi_register_module_v1');
let napiVersion = 8; // node_api.h's default NAPI_VERSION when the build does not define one
const definedNapi = /NAPI_VERSION=(\d+)/.exec(fs.readFileSync(path.join(repo, 'native', 'binding.gyp'), 'utf8'));
if (definedNapi) napiVersion = Number(definedNapi[1]);

const manifest = {
  platform: runtime.platform,
  arch: runtime.arch,
  libc: 'glibc',
  glibc: highest('GLIBC'),
  abi: napi ? { kind: 'napi', napi: napiVersion } : { kind: 'node', modules: runtime.modules, node: runtime.node },
  builtWith: { node: runtime.node, glibc: runtime.glibc, glibcxx: highest('GLIBCXX') },
  sha256: crypto.createHash('sha256').update(binary).digest('hex'),
};

const dir = path.join(prebuilds, 'linux-x64');
fs.mkdirSync(dir, { recursive: true });
fs.copyFileSync(built, path.join(dir, 'zk_native.node'));
fs.writeFileSync(path.join(dir, 'zk_native.json'), `${JSON.stringify(manifest, null, 2)}\n`);

// What the install script and the library will check, then an actual load in a fresh process.
const found = findPrebuilt(path.join(packageDir, 'native'));
if (found.problem) fail(found.problem);
const load = spawnSync(process.execPath, ['-e', 'require(process.argv[1])', found.file], { encoding: 'utf8' });
if (load.status !== 0) fail(`${found.file} does not load: ${(load.stderr || '').trim().split('\n').slice(0, 3).join(' ')}`);
say(`${path.relative(packageDir, found.file)} (${(binary.length / 1024).toFixed(0)} KiB): ${describe(manifest)}`);
