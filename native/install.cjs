'use strict';
/**
 * nestjs-zk-lock's install script: builds the native addon (native/binding.gyp) with node-gyp,
 * against the ZooKeeper C client that the `zookeeper` package built in its own install.
 *
 * The addon is an improvement, not a requirement: without it the library drives the `zookeeper`
 * package's addon, with the same locking and more CPU per request (README, "The native addon").
 * So this script never fails the install:
 * - when there is nothing to build against (the `zookeeper` package used a prebuilt binary, as on
 *   macOS and Windows) it says so and stops;
 * - when the build itself fails, it says so, and leaves native/build-failed.txt, which makes the
 *   library log a warning when it connects, until `npm rebuild nestjs-zk-lock` succeeds.
 * NESTJS_ZK_LOCK_BUILD_ADDON=0 skips the build.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const nativeDir = __dirname;
const failedMarker = path.join(nativeDir, 'build-failed.txt');

function say(message) {
  console.log(`nestjs-zk-lock: ${message}`);
}

function useFallback(reason) {
  say(`${reason} It will use the zookeeper package's addon: the same locks, more CPU per request.`);
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
  useFallback('NESTJS_ZK_LOCK_BUILD_ADDON=0: the native addon is not built.');
}

let zookeeperDir;
try {
  zookeeperDir = path.dirname(require.resolve('zookeeper/package.json', { paths: [nativeDir] }));
} catch {
  useFallback('the zookeeper package is not installed, so there is no C client to build against.');
}

const clientLibrary = path.join(zookeeperDir, 'deps', 'zookeeper-client-c', '.libs', 'libzookeeper_st.a');
if (!fs.existsSync(clientLibrary)) {
  useFallback(
    `the zookeeper package has no C client library (${clientLibrary}): it ships a prebuilt addon on this platform, or its own install script did not run.`,
  );
}

const nodeGyp = findNodeGyp();
if (!nodeGyp) {
  useFallback('node-gyp was not found (npm ships it: run the install through npm).');
}

// Node's own headers, where this Node installation has them (Debian's package and the official
// tarballs do), so node-gyp needs no download; npm's `nodedir` setting, when set, wins.
const gypArgs = [nodeGyp, 'rebuild', `--directory=${nativeDir}`];
const nodePrefix = path.resolve(path.dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && fs.existsSync(path.join(nodePrefix, 'include', 'node', 'common.gypi'))) {
  gypArgs.push(`--nodedir=${nodePrefix}`);
}

say('building the native addon (10 to 20 seconds)');
const build = spawnSync(process.execPath, gypArgs, {
  encoding: 'utf8',
  env: process.env,
  maxBuffer: 64 * 1024 * 1024,
});
if (build.status !== 0) {
  const output = `${build.stdout ?? ''}${build.stderr ?? ''}${build.error ? String(build.error) : ''}`;
  fs.writeFileSync(failedMarker, `node-gyp exit ${build.status}\n${output}`);
  process.stderr.write(output.split('\n').slice(-40).join('\n'));
  useFallback(
    `building the native addon failed (node-gyp exit ${build.status}; full output in ${failedMarker}). Fix the cause and run \`npm rebuild nestjs-zk-lock\`.`,
  );
}
say('native addon built');
