'use strict';
/**
 * Puts the prebuilt addons into a package: <package>/native/prebuilds/<platform>-<arch>/zk_native.node,
 * with zk_native.json beside each saying what it needs (see native/prebuilt.cjs):
 * - linux-x64: the build in this repository (native/build/Release/zk_native.node), checked to load;
 * - linux-arm64: cross-built by scripts/cross-build.cjs (kept in ~/.cache/nestjs-zk-lock/cross/ under a
 *   hash of its sources; it installs the cross compiler when missing and running as root, or says what to run),
 *   checked to be an aarch64 Node-API addon (it is run under qemu-user by the version check).
 * Runs at pack time (`prepack`; the packaging test calls it on its staging copy), and only on
 * linux-x64 with glibc: a tarball packed elsewhere ships no prebuilt binary, and its users build
 * from source.
 *
 * usage: node scripts/prebuild.cjs [<package dir>] [--targets linux-x64,linux-arm64]
 *          (default: this repository, both targets; writes <package dir>/native/prebuilds)
 *        node scripts/prebuild.cjs --remove   (postpack: removes this repository's native/prebuilds)
 *
 * Fails (exit 1) on linux-x64 glibc when a target has no build, a build is older than its sources, or
 * does not check out: a tarball must not ship without its binaries, or with a stale one.
 */
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { currentRuntime, platformKey, compareVersions, findPrebuilt, describe } = require('../native/prebuilt.cjs');

const repo = path.resolve(__dirname, '..');
const TARGETS = ['linux-x64', 'linux-arm64'];

function say(message) {
  console.log(`prebuild: ${message}`);
}
function fail(message) {
  console.error(`prebuild: ${message}`);
  process.exit(1);
}

const args = process.argv.slice(2);
if (args[0] === '--remove') {
  fs.rmSync(path.join(repo, 'native', 'prebuilds'), { recursive: true, force: true });
  process.exit(0);
}
const at = args.indexOf('--targets');
const targets = at === -1 ? TARGETS : (args.splice(at, 2)[1] ?? '').split(',');
const unknown = targets.filter((target) => !TARGETS.includes(target));
if (unknown.length > 0) fail(`unknown target ${unknown.join(', ')} (known: ${TARGETS.join(', ')})`);

const packageDir = path.resolve(args[0] || repo);
const prebuilds = path.join(packageDir, 'native', 'prebuilds');
fs.rmSync(prebuilds, { recursive: true, force: true });

const runtime = currentRuntime();
if (platformKey(runtime) !== 'linux-x64' || runtime.libc !== 'glibc') {
  say(`this machine is ${platformKey(runtime)}${runtime.libc ? ` (${runtime.libc})` : ''}: prebuilt binaries are made on linux-x64 with glibc only, so this tarball ships none (its users build the addon from source)`);
  process.exit(0);
}

/** The local build for linux-x64, checked to be newer than its sources. */
function localBuild() {
  const built = path.join(repo, 'native', 'build', 'Release', 'zk_native.node');
  if (!fs.existsSync(built)) fail(`there is no build to ship at ${built}: build it first (\`node native/install.cjs\`, or \`npm ci\`)`);
  const sources = ['binding.gyp', 'c-client.cjs', 'zookeeper-client-c.tar.gz', ...fs.readdirSync(path.join(repo, 'native', 'src')).map((f) => path.join('src', f))];
  const newer = sources.filter((source) => fs.statSync(path.join(repo, 'native', source)).mtimeMs > fs.statSync(built).mtimeMs);
  if (newer.length > 0) fail(`${built} is older than native/${newer.join(', native/')}: rebuild it (\`NESTJS_ZK_LOCK_BUILD_ADDON=1 node native/install.cjs\`)`);
  return built;
}

/** The cross-built addon for linux-arm64 (scripts/cross-build.cjs prints its path). */
function crossBuild() {
  const result = spawnSync(process.execPath, [path.join(__dirname, 'cross-build.cjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = (result.stdout ?? '').trim().split('\n');
  for (const line of lines.slice(0, -1)) console.log(line);
  if (result.status !== 0) fail('the linux-arm64 addon could not be cross-built (see above)');
  return lines[lines.length - 1];
}

/** What the binary needs, read from it (its glibc symbol versions), or undefined when it is no Node-API addon. */
function manifestOf(binary, arch) {
  const text = binary.toString('latin1');
  /** The highest version among the symbol versions the binary references with this prefix (GLIBC_2.28...). */
  const highest = (prefix) =>
    [...new Set(text.match(new RegExp(`${prefix}_[0-9]+(\\.[0-9]+)*`, 'g')) || [])].map((v) => v.slice(prefix.length + 1)).sort(compareVersions).pop();
  // A Node-API addon exports napi_register_module_v1 (node-addon-api's NODE_API_MODULE); anything else
  // would be tied to one Node.js ABI, which a binary shipped for every supported Node.js must not be.
  if (!text.includes('napi_register_module_v1')) return undefined;
  const defined = /NAPI_VERSION=(\d+)/.exec(fs.readFileSync(path.join(repo, 'native', 'binding.gyp'), 'utf8'));
  return {
    platform: 'linux',
    arch,
    libc: 'glibc',
    glibc: highest('GLIBC'),
    // node_api.h's default NAPI_VERSION is 8 when the build does not define one.
    abi: { kind: 'napi', napi: defined ? Number(defined[1]) : 8 },
    builtWith: { node: runtime.node, glibcxx: highest('GLIBCXX'), ...(arch === 'x64' ? { glibc: runtime.glibc } : { cross: 'aarch64-linux-gnu' }) },
    sha256: crypto.createHash('sha256').update(binary).digest('hex'),
  };
}

/** ELF e_machine of a 64-bit little-endian object: 62 x86-64, 183 AArch64. */
const ELF_MACHINE = { x64: 62, arm64: 183 };

for (const target of targets) {
  const arch = target.split('-')[1];
  const built = arch === 'x64' ? localBuild() : crossBuild();
  const binary = fs.readFileSync(built);
  if (binary.readUInt32BE(0) !== 0x7f454c46 || binary.readUInt16LE(18) !== ELF_MACHINE[arch]) fail(`${built} is not a linux ${arch} shared object`);
  const manifest = manifestOf(binary, arch);
  if (!manifest) fail(`${built} is not a Node-API addon (no napi_register_module_v1)`);
  const dir = path.join(prebuilds, target);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(built, path.join(dir, 'zk_native.node'));
  fs.writeFileSync(path.join(dir, 'zk_native.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  if (arch === 'x64') {
    // What the install script and the library will check, then an actual load in a fresh process.
    const found = findPrebuilt(path.join(packageDir, 'native'));
    if (found.problem) fail(found.problem);
    const load = spawnSync(process.execPath, ['-e', 'require(process.argv[1])', found.file], { encoding: 'utf8' });
    if (load.status !== 0) fail(`${found.file} does not load: ${(load.stderr || '').trim().split('\n').slice(0, 3).join(' ')}`);
  }
  say(`${path.relative(packageDir, path.join(dir, 'zk_native.node'))} (${(binary.length / 1024).toFixed(0)} KiB): ${describe(manifest)}`);
}
