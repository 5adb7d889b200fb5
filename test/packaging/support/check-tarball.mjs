// Checks what `npm pack` put in the tarball, from its --json report: every target package.json
// names (exports, bin, typesVersions, main, types) is in it, nothing that only the repository
// needs is, and the bin starts with its shebang. Prints the size and the file count.
// usage: node check-tarball.mjs <npm pack --json output> <the directory that was packed>
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [report, packageDir] = process.argv.slice(2);
if (!report || !packageDir) throw new Error('usage: node check-tarball.mjs <npm pack --json output> <the directory that was packed>');
const [pack] = JSON.parse(readFileSync(report, 'utf8'));
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const files = new Set(pack.files.map((f) => f.path));
const problems = [];

const targets = new Set([manifest.main, manifest.types]);
const collect = (value) => {
  if (typeof value === 'string') targets.add(value);
  else if (value && typeof value === 'object') Object.values(value).forEach(collect);
};
collect(manifest.exports);
collect(manifest.bin);
collect(manifest.typesVersions);
for (const target of targets) {
  const path = target.replace(/^\.\//, '');
  if (!files.has(path)) problems.push(`package.json names ${target}, which is not in the tarball`);
}
// dist/package.json marks the build CommonJS (the package itself is "type": "module").
for (const required of ['README.md', 'CHANGELOG.md', 'package.json', 'dist/package.json', 'native/binding.gyp', 'native/install.cjs', 'native/prebuilt.cjs', 'native/c-client.cjs', 'native/zookeeper-client-c.tar.gz', 'native/src/zk_native.cpp', 'native/LICENSE-node-zookeeper']) {
  if (!files.has(required)) problems.push(`${required} is missing`);
}
// Packed on linux-x64 with glibc (scripts/prebuild.cjs runs only there), the tarball ships the
// prebuilt addons for linux-x64 and linux-arm64 and their descriptions; packed elsewhere, none.
const linuxGlibcX64 = process.platform === 'linux' && process.arch === 'x64' && Boolean(process.report?.getReport().header.glibcVersionRuntime);
const prebuilt = ['linux-x64', 'linux-arm64'].flatMap((key) => [`native/prebuilds/${key}/zk_native.node`, `native/prebuilds/${key}/zk_native.json`]);
if (linuxGlibcX64) {
  for (const required of prebuilt) if (!files.has(required)) problems.push(`${required} is missing (a prebuilt addon)`);
}
for (const path of files) {
  if (/^native\/prebuilds\//.test(path) && !(linuxGlibcX64 && prebuilt.includes(path))) problems.push(`${path} should not ship (only the prebuilt addons for linux-x64 and linux-arm64, packed on linux-x64)`);
  if (/\.map$|\.tsbuildinfo$/.test(path)) problems.push(`${path} should not ship (source maps point at lib/, which does not)`);
  if (/^(lib|test|bench|sample-app|scripts|build|node_modules)\//.test(path)) problems.push(`${path} is repository-only`);
  if (/^native\/(build|cross|c-client)\//.test(path)) problems.push(`${path} is a local build (the tarball ships native/prebuilds/ and the C client's sources instead)`);
  if (/\.ts$/.test(path) && !/\.d\.ts$/.test(path)) problems.push(`${path} is a TypeScript source`);
}
if (files.has('dist/package.json') && JSON.parse(readFileSync(join(packageDir, 'dist/package.json'), 'utf8')).type !== 'commonjs') {
  problems.push('dist/package.json does not say "type": "commonjs", so Node would load the CommonJS build as ES modules');
}
for (const bin of Object.values(manifest.bin ?? {})) {
  const firstLine = readFileSync(join(packageDir, bin), 'utf8').split('\n', 1)[0];
  if (firstLine !== '#!/usr/bin/env node') problems.push(`${bin} starts with ${JSON.stringify(firstLine)}, not the node shebang`);
}

const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
console.log(`${pack.filename}: ${kB(pack.size)} packed, ${kB(pack.unpackedSize)} unpacked, ${pack.entryCount} files`);
if (problems.length > 0) {
  for (const problem of problems) console.error(`  - ${problem}`);
  process.exit(1);
}
console.log(`contents ok: ${targets.size} package.json targets present, no maps, no sources, bin has its shebang${linuxGlibcX64 ? ', prebuilt addons for linux-x64 and linux-arm64' : ''}`);
