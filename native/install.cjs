'use strict';
/**
 * nestjs-zk-lock's install script: builds the ZooKeeper C client from the sources the `zookeeper`
 * package ships (deps/zookeeper-client-c.tar.gz, the same client its own addon is built from) into
 * native/c-client, then the native addon (native/binding.gyp) against it with node-gyp.
 *
 * It does not use the client the `zookeeper` package builds in its own install: npm runs the install
 * scripts of packages at the same depth in parallel, so that build may not be finished yet.
 *
 * The library runs on this addon only. This script still never fails the install, so that
 * importing the package (its types, the in-memory testing kit) works on a machine that cannot build
 * it; the first connection then fails with a ZkNativeAddonError that says what to do:
 * - when there is nothing to build against (Windows, or no C sources) it says so and stops;
 * - when the build itself fails, it says so, and leaves native/build-failed.txt, which the library
 *   names in its error, until `npm rebuild nestjs-zk-lock` succeeds.
 * NESTJS_ZK_LOCK_BUILD_ADDON=0 skips the build.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const nativeDir = __dirname;
const failedMarker = path.join(nativeDir, 'build-failed.txt');
const clientDir = path.join(nativeDir, 'c-client');

function say(message) {
  console.log(`nestjs-zk-lock: ${message}`);
}

/** Ends the install without the addon: the library will refuse to connect, saying why (ZkNativeAddonError). */
function withoutAddon(reason) {
  say(`${reason} Until the addon is built, nestjs-zk-lock cannot connect to ZooKeeper (it throws ZkNativeAddonError at the first connect).`);
  process.exit(0);
}

function findNodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  try {
    candidates.push(require.resolve('node-gyp/bin/node-gyp.js', { paths: [nativeDir] }));
  } catch {
    // not installed as a package: npm's own copy above is the usual one
  }
  return candidates.find((candidate) => candidate && fs.existsSync(candidate));
}

fs.rmSync(failedMarker, { force: true });

if (process.env.NESTJS_ZK_LOCK_BUILD_ADDON === '0') {
  withoutAddon('NESTJS_ZK_LOCK_BUILD_ADDON=0: the native addon is not built.');
}

let zookeeperDir;
try {
  zookeeperDir = path.dirname(require.resolve('zookeeper/package.json', { paths: [nativeDir] }));
} catch {
  withoutAddon('the zookeeper package is not installed, so there is no C client to build against.');
}

if (process.platform === 'win32') {
  withoutAddon('its native addon is not built on Windows.');
}
const clientSources = path.join(zookeeperDir, 'deps', 'zookeeper-client-c.tar.gz');
if (!fs.existsSync(clientSources)) {
  withoutAddon(`the zookeeper package has no C client sources at ${clientSources}.`);
}

/** Runs a build step; on failure leaves the marker and stops. */
function run(what, command, args, options) {
  const result = spawnSync(command, args, { encoding: 'utf8', env: process.env, maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.status === 0) return;
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`;
  fs.writeFileSync(failedMarker, `${what}: exit ${result.status}\n${output}`);
  process.stderr.write(output.split('\n').slice(-40).join('\n'));
  withoutAddon(
    `building the native addon failed at "${what}" (exit ${result.status}; full output in ${failedMarker}). Fix the cause and run \`npm rebuild nestjs-zk-lock\`.`,
  );
}

const clientLibrary = path.join(clientDir, '.libs', 'libzookeeper_st.la');
if (!fs.existsSync(clientLibrary)) {
  say('building the ZooKeeper C client (about 15 seconds)');
  fs.rmSync(clientDir, { recursive: true, force: true });
  fs.mkdirSync(clientDir);
  run('extract the C client', 'tar', ['-xzf', clientSources, '-C', clientDir, '--strip-components=1']);
  // As the zookeeper package configures it, but optimised (it builds with CFLAGS=-w, so -O0).
  run('configure the C client', './configure', [
    'CFLAGS=-w -O2',
    '--without-syncapi',
    '--disable-shared',
    '--with-pic',
    '--without-cppunit',
    '--without-openssl',
    '--enable-silent-rules',
    '--quiet',
  ], { cwd: clientDir });
  run('make the C client', 'make', ['--no-print-directory', '--quiet', 'libzookeeper_st.la'], { cwd: clientDir });
}

const nodeGyp = findNodeGyp();
if (!nodeGyp) {
  withoutAddon('node-gyp was not found (npm ships it: run the install through npm).');
}

// Node's own headers, where this Node installation has them (Debian's package and the official
// tarballs do), so node-gyp needs no download; npm's `nodedir` setting, when set, wins.
const gypArgs = [nodeGyp, 'rebuild', `--directory=${nativeDir}`];
const nodePrefix = path.resolve(path.dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && fs.existsSync(path.join(nodePrefix, 'include', 'node', 'common.gypi'))) {
  gypArgs.push(`--nodedir=${nodePrefix}`);
}

say('building the native addon');
run('node-gyp rebuild', process.execPath, gypArgs);
say('native addon built');
