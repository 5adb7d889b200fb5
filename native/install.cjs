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

/**
 * Session contact: the addon's ping_answered_age() tells how long ago the most recent ping the server
 * answered was sent, so that the session's lease can count the C client's own pings (sent every third
 * of the session timeout when idle) as contact. The C client keeps no such thing: send_ping stamps
 * zh->last_ping (on CLOCK_MONOTONIC_RAW, not the clock of performance.now()), overwritten by every
 * ping, and zookeeper_process drops a ping's reply without a trace. It cannot be seen from outside
 * (the replies are consumed inside zookeeper_process, and zhandle_t is private), so the extracted
 * source is edited, minimally, before it is built:
 * - zk_adaptor.h: zhandle_t gains counts of pings sent and answered on the current connection, the
 *   send times (CLOCK_MONOTONIC, the clock of uv_hrtime and performance.now()) of the last
 *   NZL_PING_RING pings sent, and the send time of the latest answered one;
 * - zookeeper.c: send_ping records its send time; a ping reply takes the send time of the OLDEST
 *   ping still unanswered (several can be outstanding; whichever one this reply answers was sent no
 *   earlier, so this is a lower bound of its send time), or leaves the value as it was when that
 *   send time was overwritten in the ring; everything is reset when a new connection starts; and
 *   zoo_nzl_ping_answered_age_ns() gives the age of that send time, read on the same clock.
 * Each edit replaces text that must be found exactly once, or the build stops with the reason.
 */
const CLIENT_EDITS_VERSION = 'session-contact-1';
const clientEditsStamp = path.join(clientDir, '.nestjs-zk-lock-edits');

function editOnce(file, anchor, replacement) {
  const text = fs.readFileSync(file, 'utf8');
  const at = text.indexOf(anchor);
  if (at === -1 || text.indexOf(anchor, at + 1) !== -1) {
    throw new Error(`${path.relative(clientDir, file)}: expected exactly one "${anchor.trim().split('\n')[0]}" (found ${at === -1 ? 'none' : 'several'}): this version of the C client is not the one nestjs-zk-lock's edits were written for`);
  }
  fs.writeFileSync(file, text.slice(0, at) + replacement + text.slice(at + anchor.length));
}

function editClient() {
  const adaptor = path.join(clientDir, 'src', 'zk_adaptor.h');
  const client = path.join(clientDir, 'src', 'zookeeper.c');
  const lastPing = '    struct timeval last_ping;           // time last PING was sent\n';
  editOnce(adaptor, lastPing, `${lastPing}    /* nestjs-zk-lock (native/install.cjs): pings on the current connection, for ping_answered_age */
    int64_t nzl_pings_sent;             // pings sent
    int64_t nzl_pings_answered;         // ping replies received
    int64_t nzl_ping_sent_ns[NZL_PING_RING]; // CLOCK_MONOTONIC send time of ping k at [k % NZL_PING_RING]
    int64_t nzl_ping_answered_ns;       // send time (lower bound) of the latest answered ping, or -1
`);
  editOnce(adaptor, '#define PING_XID -2\n', '#define PING_XID -2\n#define NZL_PING_RING 8\n');

  const sendPing = ' int send_ping(zhandle_t* zh)\n {\n';
  editOnce(client, sendPing, `/* nestjs-zk-lock (native/install.cjs): the send times of pings, for ping_answered_age. */
static int64_t nzl_now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void nzl_pings_reset(zhandle_t *zh)
{
    zh->nzl_pings_sent = 0;
    zh->nzl_pings_answered = 0;
    zh->nzl_ping_answered_ns = -1;
}

static void nzl_ping_sent(zhandle_t *zh)
{
    zh->nzl_ping_sent_ns[zh->nzl_pings_sent % NZL_PING_RING] = nzl_now_ns();
    zh->nzl_pings_sent++;
}

/* A ping reply: it answers one of the pings outstanding, each sent no earlier than the oldest of them,
 * whose send time is taken (unless a later ping overwrote it in the ring: then nothing is learnt). */
static void nzl_ping_answered(zhandle_t *zh)
{
    int64_t oldest;
    if (zh->nzl_pings_answered >= zh->nzl_pings_sent)
        return;
    oldest = zh->nzl_pings_answered++;
    if (zh->nzl_pings_sent - oldest <= NZL_PING_RING) {
        int64_t sent = zh->nzl_ping_sent_ns[oldest % NZL_PING_RING];
        if (sent >= 0 && sent > zh->nzl_ping_answered_ns)
            zh->nzl_ping_answered_ns = sent;
    }
}

/* Nanoseconds since the send of the latest ping answered on the current connection, on
 * CLOCK_MONOTONIC; -1 when none was. */
int64_t zoo_nzl_ping_answered_age_ns(zhandle_t *zh)
{
    int64_t now;
    if (zh == NULL || zh->nzl_ping_answered_ns < 0)
        return -1;
    now = nzl_now_ns();
    if (now < 0)
        return -1;
    return now - zh->nzl_ping_answered_ns;
}

${sendPing}`);
  const stamp = '    get_system_time(&zh->last_ping);\n';
  editOnce(client, stamp, `${stamp}    nzl_ping_sent(zh);\n`);
  const reconnect = '        zh->last_ping = now;\n';
  editOnce(client, reconnect, `${reconnect}        nzl_pings_reset(zh);\n`);
  const reply = '        if (hdr.xid == PING_XID) {\n';
  editOnce(client, reply, `${reply}            nzl_ping_answered(zh);\n`);
  // A handle that never connected reports none.
  const created = '    zh->fd = calloc(1, sizeof(zsock_t));\n';
  editOnce(client, created, `${created}    zh->nzl_ping_answered_ns = -1;\n`);
}

const clientLibrary = path.join(clientDir, '.libs', 'libzookeeper_st.la');
const clientEdited = fs.existsSync(clientEditsStamp) && fs.readFileSync(clientEditsStamp, 'utf8').trim() === CLIENT_EDITS_VERSION;
if (!fs.existsSync(clientLibrary) || !clientEdited) {
  say('building the ZooKeeper C client (about 15 seconds)');
  fs.rmSync(clientDir, { recursive: true, force: true });
  fs.mkdirSync(clientDir);
  run('extract the C client', 'tar', ['-xzf', clientSources, '-C', clientDir, '--strip-components=1']);
  try {
    editClient();
  } catch (error) {
    fs.writeFileSync(failedMarker, `edit the C client: ${error.message}\n`);
    withoutAddon(`building the native addon failed at "edit the C client" (${error.message}).`);
  }
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
  fs.writeFileSync(clientEditsStamp, `${CLIENT_EDITS_VERSION}\n`);
}

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
