'use strict';
/**
 * The prebuilt addon the package ships (native/prebuilds/<platform>-<arch>/zk_native.node, put there
 * at pack time by scripts/prebuild.cjs), and whether it can run here. One definition, used by the
 * install script (native/install.cjs: build nothing when it loads) and by the library
 * (lib/zookeeper/native-client.ts: load it when there is no local build).
 *
 * Next to the binary, zk_native.json records what it needs:
 *   { "platform": "linux", "arch": "x64", "libc": "glibc", "glibc": "2.28",
 *     "abi": { "kind": "node", "modules": 115, "node": "20.20.2" }   (a nan addon: one Node major)
 *        or { "kind": "napi", "napi": 8 }                            (a Node-API addon: any Node with it)
 *     "builtWith": { ... } }
 * "glibc" is the highest GLIBC_x.y symbol version the binary references (its real minimum, not the
 * build machine's version). abiProblem() is the only place that compares "abi" with this Node.
 */
const fs = require('node:fs');
const path = require('node:path');

/** This process: what a prebuilt binary must match. */
function currentRuntime() {
  let glibc;
  if (process.platform === 'linux' && process.report) {
    // Only the header is needed; without excludeNetwork, a report may look up the names of open sockets.
    const exclude = process.report.excludeNetwork;
    try {
      process.report.excludeNetwork = true;
      glibc = process.report.getReport().header.glibcVersionRuntime;
    } catch {
      glibc = undefined;
    } finally {
      process.report.excludeNetwork = exclude;
    }
  }
  return {
    platform: process.platform,
    arch: process.arch,
    // Node reports a glibc version on glibc systems only (musl, e.g. Alpine, has none).
    libc: process.platform !== 'linux' ? undefined : glibc ? 'glibc' : 'musl',
    glibc,
    node: process.versions.node,
    modules: Number(process.versions.modules),
    napi: Number(process.versions.napi),
  };
}

/** The prebuilds/ subdirectory for a runtime: linux-x64 (glibc), linux-x64-musl, darwin-arm64, ... */
function platformKey(runtime) {
  return `${runtime.platform}-${runtime.arch}${runtime.libc === 'musl' ? '-musl' : ''}`;
}

/** -1, 0 or 1 for dotted version strings ('2.28' < '2.36'). */
function compareVersions(a, b) {
  const x = String(a).split('.').map(Number);
  const y = String(b).split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] || 0) - (y[i] || 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/**
 * Why a binary described by `abi` cannot be loaded by this Node.js, or undefined when it can. A nan
 * addon (kind "node") needs exactly the NODE_MODULE_VERSION it was compiled for; a Node-API addon
 * (kind "napi") runs on every Node.js whose Node-API version is at least the one it was built for.
 */
function abiProblem(abi, runtime) {
  if (abi && abi.kind === 'napi') {
    if (!(runtime.napi >= abi.napi)) {
      return `it needs Node-API ${abi.napi}, and this Node.js ${runtime.node} has Node-API ${runtime.napi}: use a newer Node.js`;
    }
    return undefined;
  }
  if (abi && abi.kind === 'node') {
    if (abi.modules !== runtime.modules) {
      const major = String(abi.node || '').split('.')[0];
      return (
        `it was built for Node.js ${major || '?'} (NODE_MODULE_VERSION ${abi.modules}), and this is Node.js ${runtime.node} ` +
        `(NODE_MODULE_VERSION ${runtime.modules}): run on Node.js ${major || 'of that ABI'}, or build the addon for this Node.js`
      );
    }
    return undefined;
  }
  return `its zk_native.json does not say which Node.js ABI it needs (${JSON.stringify(abi)})`;
}

/** Why a binary built for `manifest` cannot run on this platform (OS, CPU, C library), or undefined. */
function platformProblem(manifest, runtime) {
  if (manifest.platform !== runtime.platform || manifest.arch !== runtime.arch) {
    return `it is for ${manifest.platform}-${manifest.arch}, and this is ${runtime.platform}-${runtime.arch}`;
  }
  if (manifest.libc && manifest.libc !== runtime.libc) {
    return `it is for ${manifest.libc}, and this system's C library is ${runtime.libc}`;
  }
  if (manifest.libc === 'glibc' && manifest.glibc && runtime.glibc && compareVersions(runtime.glibc, manifest.glibc) < 0) {
    return `it needs glibc ${manifest.glibc} or newer, and this system has glibc ${runtime.glibc}`;
  }
  return undefined;
}

/** Short description of a manifest for messages: "linux-x64 glibc >= 2.28, Node.js 20 (NODE_MODULE_VERSION 115)". */
function describe(manifest) {
  const abi = manifest.abi || {};
  const needs = abi.kind === 'napi' ? `Node-API ${abi.napi}` : `Node.js ${String(abi.node || '').split('.')[0]} (NODE_MODULE_VERSION ${abi.modules})`;
  const libc = manifest.libc === 'glibc' ? ` glibc >= ${manifest.glibc}` : manifest.libc ? ` ${manifest.libc}` : '';
  return `${manifest.platform}-${manifest.arch}${libc}, ${needs}`;
}

/**
 * The prebuilt binary for this platform in `nativeDir` (this package's native/):
 * { file, manifest } when it matches this platform and Node.js ABI, or { file?, manifest?, problem }
 * saying why there is none that can run here. Whether it actually loads is for the caller to try.
 */
function findPrebuilt(nativeDir, runtime = currentRuntime()) {
  const prebuilds = path.join(nativeDir, 'prebuilds');
  const key = platformKey(runtime);
  const dir = path.join(prebuilds, key);
  const file = path.join(dir, 'zk_native.node');
  const manifestFile = path.join(dir, 'zk_native.json');
  if (!fs.existsSync(file) || !fs.existsSync(manifestFile)) {
    let shipped = [];
    try {
      shipped = fs.readdirSync(prebuilds).filter((entry) => fs.existsSync(path.join(prebuilds, entry, 'zk_native.node')));
    } catch {
      // no prebuilds/ at all
    }
    return {
      problem: `there is no prebuilt binary for ${key}${runtime.libc === 'glibc' ? ' with glibc' : ''} (this package ships ${shipped.length > 0 ? `one for ${shipped.join(', ')}` : 'none'})`,
    };
  }
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch (error) {
    return { file, problem: `the prebuilt binary's description ${manifestFile} cannot be read (${error.message})` };
  }
  const problem = platformProblem(manifest, runtime) || abiProblem(manifest.abi, runtime);
  if (problem) return { file, manifest, problem: `the prebuilt binary ${file} cannot be used here: ${problem}` };
  return { file, manifest };
}

module.exports = { currentRuntime, platformKey, compareVersions, abiProblem, platformProblem, describe, findPrebuilt };
