'use strict';
/**
 * nestjs-zk-lock's install script: builds the native addon (native/binding.gyp) with node-gyp,
 * against the ZooKeeper C client it first builds into native/c-client from the sources this package
 * ships (native/c-client.cjs).
 *
 * The library runs on this addon only. This script still never fails the install, so that
 * importing the package (its types, the in-memory testing kit) works on a machine that cannot build
 * it; the first connection then fails with a ZkNativeAddonError that says what to do:
 * - when there is nothing to build with (Windows) it says so and stops;
 * - when the build itself fails, it says so, and leaves native/build-failed.txt, which the library
 *   names in its error, until `npm rebuild nestjs-zk-lock` succeeds.
 * NESTJS_ZK_LOCK_BUILD_ADDON=0 skips the build.
 *
 * First, though, it looks for the prebuilt binary the package ships for this platform
 * (native/prebuilds/, see native/prebuilt.cjs): when that matches this platform and Node.js ABI and
 * loads in a child process, it builds nothing and says so in one line. Otherwise it checks for the
 * tools a build needs (python3, make, a C and a C++ compiler) before starting, and when one is
 * missing says exactly what to install. NESTJS_ZK_LOCK_BUILD_ADDON=1 builds from source even when the
 * prebuilt binary would do. The library does not need this script to have run when a prebuilt
 * binary fits (it finds it itself). Required as a module (the tests, scripts/cross-build.cjs), it only
 * exports its decision and helpers.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const prebuiltModule = require('./prebuilt.cjs');
const { SOURCES, buildClient } = require('./c-client.cjs');

const nativeDir = __dirname;
const prebuiltDescribe = prebuiltModule.describe;
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

/** Why the binary does not load in a fresh Node.js process, or undefined when it does. */
function loadProblem(file) {
  const result = spawnSync(process.execPath, ['-e', 'require(process.argv[1])', file], { encoding: 'utf8', timeout: 60_000 });
  if (result.status === 0) return undefined;
  const message = `${result.stderr ?? ''}${result.error ? String(result.error) : ''}`.split('\n').find((line) => /Error|error:/.test(line));
  return (message ?? `exit ${result.status}`).trim();
}

/** An executable on PATH with this name, or undefined (like `command -v`, without a shell). */
function onPath(name, env = process.env) {
  if (name.includes('/')) return fs.existsSync(name) ? name : undefined;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not there
    }
  }
  return undefined;
}

/**
 * The tools a build from source needs that this machine lacks, by the name to install:
 * python3 (node-gyp), make, and a C compiler (the C client's configure) and a C++ one (the addon),
 * each where node-gyp and configure look for them (PYTHON/npm_config_python, CC, CXX, then PATH).
 */
function missingBuildTools(env = process.env) {
  const first = (...names) => names.find((name) => name && onPath(name.split(' ')[0], env));
  const missing = [];
  if (!first(env.PYTHON, env.npm_config_python, 'python3', 'python')) missing.push('python3');
  if (!first('make')) missing.push('make');
  if (!first(env.CC, 'cc', 'gcc', 'clang')) missing.push('a C compiler (gcc)');
  if (!first(env.CXX, 'g++', 'c++', 'clang++')) missing.push('a C++ compiler (g++)');
  return missing;
}

const INSTALL_TOOLS =
  'Install them (Debian/Ubuntu: `apt-get install python3 make g++`; Fedora: `dnf install python3 make gcc-c++`; ' +
  'Alpine: `apk add python3 make g++`; macOS: `xcode-select --install`), then run `npm rebuild nestjs-zk-lock`.';

/**
 * What the install does, from what it found: { action: 'prebuilt' | 'build' | 'none', message }.
 * - prebuilt: { file, manifest, problem? } from findPrebuilt; loads: why it does not load (undefined: it does);
 * - missingTools: from missingBuildTools(); env: NESTJS_ZK_LOCK_BUILD_ADDON.
 */
function decide({ prebuilt, loads, missingTools, env = process.env }) {
  const setting = env.NESTJS_ZK_LOCK_BUILD_ADDON;
  const unusable =
    setting === '1' ? 'NESTJS_ZK_LOCK_BUILD_ADDON=1' : (prebuilt.problem ?? (loads ? `the prebuilt binary ${prebuilt.file} does not load: ${loads}` : undefined));
  if (!unusable) {
    return { action: 'prebuilt', message: `using the prebuilt native addon (${prebuiltDescribe(prebuilt.manifest)}): nothing to build.` };
  }
  if (setting === '0') {
    return { action: 'none', message: 'NESTJS_ZK_LOCK_BUILD_ADDON=0: the native addon is not built.' };
  }
  if (missingTools.length > 0) {
    return {
      action: 'none',
      message: `${unusable}, and the addon cannot be built from source here: ${missingTools.join(', ')} ${missingTools.length === 1 ? 'is' : 'are'} missing. ${INSTALL_TOOLS}`,
    };
  }
  return { action: 'build', message: `${unusable}: building the addon from source.` };
}

module.exports = { decide, missingBuildTools, loadProblem, onPath, findNodeGyp };
// Required by the tests: the decision only, no install.
if (require.main !== module) return;

fs.rmSync(failedMarker, { force: true });

const found = prebuiltModule.findPrebuilt(nativeDir);
const decision = decide({
  prebuilt: found,
  // The load test costs a Node.js start (about 50 ms): only for a binary that matches on paper.
  loads: !found.problem && process.env.NESTJS_ZK_LOCK_BUILD_ADDON !== '1' ? loadProblem(found.file) : undefined,
  missingTools: missingBuildTools(),
});
if (decision.action === 'prebuilt') {
  say(decision.message);
  process.exit(0);
}
if (decision.action === 'none' && process.env.NESTJS_ZK_LOCK_BUILD_ADDON === '0') withoutAddon(decision.message);

if (process.platform === 'win32') {
  withoutAddon('its native addon is not built on Windows.');
}
if (!fs.existsSync(SOURCES)) {
  withoutAddon(`the C client's sources are missing (${SOURCES}): reinstall nestjs-zk-lock.`);
}
if (decision.action === 'none') withoutAddon(decision.message);
say(decision.message);

/** Runs a build step; on failure leaves the marker and stops. */
function run(what, command, args, options) {
  const result = spawnSync(command, args, { encoding: 'utf8', env: process.env, maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.status === 0) return;
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`;
  failed(what, `exit ${result.status}`, output);
}

/** Leaves the marker the library names, and ends the install without the addon. */
function failed(what, why, output) {
  fs.writeFileSync(failedMarker, `${what}: ${why}\n${output}`);
  process.stderr.write(output.split('\n').slice(-40).join('\n'));
  withoutAddon(
    `building the native addon failed at "${what}" (${why}; full output in ${failedMarker}). Fix the cause and run \`npm rebuild nestjs-zk-lock\`.`,
  );
}

// Node's own headers, where this Node installation has them (Debian's package and the official
// tarballs do), so node-gyp needs no download; npm's `nodedir` setting, when set, wins.
const nodePrefix = path.resolve(path.dirname(process.execPath), '..');
buildClient(clientDir, {
  run,
  fail: (what, message) => failed(what, message, ''),
  say,
  nodedir: process.env.npm_config_nodedir || nodePrefix,
});

// The addon's C++ wrapper of Node-API (headers only), which binding.gyp includes.
try {
  require.resolve('node-addon-api', { paths: [nativeDir] });
} catch {
  withoutAddon('the node-addon-api package (a dependency of nestjs-zk-lock) is not installed, so the addon cannot be compiled.');
}

const nodeGyp = findNodeGyp();
if (!nodeGyp) {
  withoutAddon('node-gyp was not found (npm ships it: run the install through npm).');
}

const gypArgs = [nodeGyp, 'rebuild', `--directory=${nativeDir}`];
if (!process.env.npm_config_nodedir && fs.existsSync(path.join(nodePrefix, 'include', 'node', 'common.gypi'))) {
  gypArgs.push(`--nodedir=${nodePrefix}`);
}

say('building the native addon');
run('node-gyp rebuild', process.execPath, gypArgs);
say('native addon built');
