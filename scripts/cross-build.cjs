'use strict';
/**
 * Builds the native addon for linux-arm64 (glibc) on this linux-x64 machine, with Debian's cross
 * compiler (aarch64-linux-gnu-gcc/g++): the C client from the package's sources (native/c-client.cjs,
 * the same edits as a native build), then native/src against it with node-gyp --arch=arm64 and
 * this Node.js installation's headers (Node-API and OpenSSL headers are the same for every CPU; the
 * OpenSSL configuration picks the aarch64 one by itself). It builds in native/cross/linux-arm64/ (a
 * copy of binding.gyp and src/, its c-client/ and build/), and keeps the result in
 * ~/.cache/nestjs-zk-lock/cross/, named by a hash of everything it is made from (these sources, this
 * script, the Node.js headers' version), so a fresh clone (CI) reuses it instead of spending most of
 * a minute. scripts/prebuild.cjs ships the result; the tests run it under qemu-user.
 *
 * usage: node scripts/cross-build.cjs   (prints the path of zk_native.node; exit 1 with the reason on failure)
 * Installs the cross compiler when it is missing and this runs as root (scripts/ensure-arm64-tools.sh),
 * or says what to run.
 */
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SOURCES, buildClient } = require('../native/c-client.cjs');

const repo = path.resolve(__dirname, '..');
const native = path.join(repo, 'native');
const stage = path.join(native, 'cross', 'linux-arm64');
const HOST = 'aarch64-linux-gnu';
const output = path.join(stage, 'build', 'Release', 'zk_native.node');
const cacheDir = path.join(os.homedir(), '.cache', 'nestjs-zk-lock', 'cross');

function say(message) {
  console.log(`cross-build: ${message}`);
}
function fail(message) {
  console.error(`cross-build: ${message}`);
  process.exit(1);
}
function run(what, command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options, env: { ...process.env, ...options.env } });
  if (result.status === 0) return;
  const log = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`;
  fail(`${what} failed (exit ${result.status}):\n${log.split('\n').slice(-30).join('\n')}`);
}

/** A hash of what the build is made from: the files, and the Node.js whose headers it is compiled against. */
function recipe() {
  const src = fs
    .readdirSync(path.join(native, 'src'), { recursive: true })
    .sort()
    .map((file) => path.join(native, 'src', file))
    .filter((file) => fs.statSync(file).isFile()); // src/sasl/sasl.h is in a directory
  const hash = crypto.createHash('sha256').update(`${HOST} node ${process.versions.node}\n`);
  for (const file of [path.join(native, 'binding.gyp'), path.join(native, 'c-client.cjs'), SOURCES, __filename, ...src]) {
    hash.update(`${path.relative(native, file)}\n`).update(fs.readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

if (process.platform !== 'linux' || process.arch !== 'x64') fail(`the arm64 addon is cross-built on linux-x64; this is ${process.platform}-${process.arch}`);
const cached = path.join(cacheDir, `linux-arm64-${recipe()}.node`);
if (fs.existsSync(cached)) {
  console.log(cached);
  process.exit(0);
}

const tools = spawnSync('bash', [path.join(repo, 'scripts', 'ensure-arm64-tools.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
if (tools.status !== 0) fail(`the cross compiler ${HOST}-g++ is missing (see above: Debian's g++-${HOST})`);

const nodedir = path.resolve(path.dirname(process.execPath), '..');
if (!fs.existsSync(path.join(nodedir, 'include', 'node', 'node_api.h'))) {
  fail(`this Node.js installation (${nodedir}) has no headers in include/node: run with an official Node.js build or Debian's nodejs`);
}
const nodeGyp = require('../native/install.cjs').findNodeGyp();
if (!nodeGyp) fail("node-gyp was not found (npm ships it: run this with the npm that came with this Node.js)");

fs.rmSync(path.join(stage, 'build'), { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });
for (const entry of ['binding.gyp', 'src']) {
  fs.rmSync(path.join(stage, entry), { recursive: true, force: true });
  fs.cpSync(path.join(native, entry), path.join(stage, entry), { recursive: true });
}
const client = buildClient(path.join(stage, 'c-client'), { run, fail: (what, message) => fail(`${what}: ${message}`), say, nodedir, host: HOST });
if (!client.tls) fail(`the arm64 C client would have no TLS (${client.why}), unlike the linux-x64 one`);

say('building the addon for linux-arm64');
run('node-gyp rebuild --arch=arm64', process.execPath, [nodeGyp, 'rebuild', `--directory=${stage}`, '--arch=arm64', `--nodedir=${nodedir}`], {
  env: { CC: `${HOST}-gcc`, CXX: `${HOST}-g++`, LINK: `${HOST}-g++`, AR: `${HOST}-ar`, npm_config_nodedir: nodedir },
});
if (!fs.existsSync(output)) fail(`node-gyp reported success but made no ${output}`);
fs.mkdirSync(cacheDir, { recursive: true });
// Written under another name first: a cache entry is never half a file.
fs.copyFileSync(output, `${cached}.tmp`);
fs.renameSync(`${cached}.tmp`, cached);
console.log(cached);
