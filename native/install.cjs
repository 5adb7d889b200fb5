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
 *
 * First, though, it looks for the prebuilt binary the package ships for this platform
 * (native/prebuilds/, see native/prebuilt.cjs): when that matches this platform and Node.js ABI and
 * loads in a child process, it builds nothing and says so in one line. Otherwise it checks for the
 * tools a build needs (python3, make, a C and a C++ compiler) before starting, and when one is
 * missing says exactly what to install. NESTJS_ZK_LOCK_BUILD_ADDON=1 builds from source even when the
 * prebuilt binary would do. Required as a module (the tests), it only exports its decision.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const prebuiltModule = require('./prebuilt.cjs');

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

module.exports = { decide, missingBuildTools, loadProblem, onPath };
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
if (decision.action === 'none') withoutAddon(decision.message);
say(decision.message);

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

/**
 * Applies [anchor, replacement] edits to one file of the extracted C client, in order, each anchor
 * found exactly once; all or nothing. Returns why not (nothing written), or undefined when applied.
 */
function applyEdits(file, edits) {
  let text = fs.readFileSync(file, 'utf8');
  for (const [anchor, replacement] of edits) {
    const at = text.indexOf(anchor);
    if (at === -1 || text.indexOf(anchor, at + 1) !== -1) {
      return `${path.relative(clientDir, file)}: expected exactly one "${anchor.trim().split('\n')[0]}" (found ${at === -1 ? 'none' : 'several'})`;
    }
    text = text.slice(0, at) + replacement + text.slice(at + anchor.length);
  }
  fs.writeFileSync(file, text);
  return undefined;
}

function editClient() {
  const adaptor = path.join(clientDir, 'src', 'zk_adaptor.h');
  const client = path.join(clientDir, 'src', 'zookeeper.c');
  const lastPing = '    struct timeval last_ping;           // time last PING was sent\n';
  const sendPing = ' int send_ping(zhandle_t* zh)\n {\n';
  const stamp = '    get_system_time(&zh->last_ping);\n';
  const reconnect = '        zh->last_ping = now;\n';
  const reply = '        if (hdr.xid == PING_XID) {\n';
  const created = '    zh->fd = calloc(1, sizeof(zsock_t));\n';
  const problem =
    applyEdits(adaptor, [
      [
        lastPing,
        `${lastPing}    /* nestjs-zk-lock (native/install.cjs): pings on the current connection, for ping_answered_age */
    int64_t nzl_pings_sent;             // pings sent
    int64_t nzl_pings_answered;         // ping replies received
    int64_t nzl_ping_sent_ns[NZL_PING_RING]; // CLOCK_MONOTONIC send time of ping k at [k % NZL_PING_RING]
    int64_t nzl_ping_answered_ns;       // send time (lower bound) of the latest answered ping, or -1
`,
      ],
      ['#define PING_XID -2\n', '#define PING_XID -2\n#define NZL_PING_RING 8\n'],
    ]) ??
    applyEdits(client, [
      [
        sendPing,
        `/* nestjs-zk-lock (native/install.cjs): the send times of pings, for ping_answered_age. */
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

${sendPing}`,
      ],
      [stamp, `${stamp}    nzl_ping_sent(zh);\n`],
      [reconnect, `${reconnect}        nzl_pings_reset(zh);\n`],
      [reply, `${reply}            nzl_ping_answered(zh);\n`],
      // A handle that never connected reports none.
      [created, `${created}    zh->nzl_ping_answered_ns = -1;\n`],
    ]);
  if (problem) throw new Error(`${problem}: this version of the C client is not the one nestjs-zk-lock's edits were written for`);
}

const clientLibrary = path.join(clientDir, '.libs', 'libzookeeper_st.la');

// --- TLS: the C client is built with OpenSSL, taken from the Node.js process itself ---------------
//
// Node.js (the official binaries, as in the node:20 / node:22 images, and builds like it) links
// OpenSSL 3 statically and exports its SSL_* / ERR_* / ... symbols from the `node` executable; its
// OpenSSL headers ship with Node's own headers, in <nodedir>/include/node/openssl. So the C client
// is compiled against those headers (CPPFLAGS below, HAVE_OPENSSL_H), and neither it nor the addon is
// linked with -lssl/-lcrypto: the addon's SSL_* references stay undefined in zk_native.node and
// resolve, when Node loads it, against the OpenSSL already in the process (the one Node's own `tls`
// uses). No libssl-dev is needed, and no second OpenSSL is loaded. configure's library check
// (AC_CHECK_LIB(ssl, SSL_CTX_new), which would need a libssl to link a test program against) is
// answered through its cache variable; its header check runs for real, against Node's headers.
// A Node built against a shared system libssl (some distributions' packages) also works: the symbols
// are then in the process through that library.
//
// The C client's TLS handshake (init_ssl_for_socket) loops on select() until SSL_connect finishes,
// with no deadline, on the thread that drives it: Node's event loop here. A server that accepts the
// connection but never answers the handshake would freeze the process. patchHandshake() makes the
// handshake non-blocking (SSL_connect is resumed on each readiness event, the poll asks for the
// direction OpenSSL wants) and bounded by the C client's connect timeout, as a plain connect is; it
// also lets the client certificate be absent (the C client insisted on one).
// When Node's OpenSSL headers are missing, or the patch does not apply to these C sources, the C
// client is built without TLS; the `tls` option is then refused at connect with a clear error.
const buildStamp = path.join(clientDir, 'nestjs-zk-lock-build.json');
const BUILD_VERSION = 5; // bump when the way the C client is configured or edited changes (editClient, patchHandshake)

function nodeOpenSslHeaders() {
  const nodedir = process.env.npm_config_nodedir || path.resolve(path.dirname(process.execPath), '..');
  const include = path.join(nodedir, 'include', 'node');
  return fs.existsSync(path.join(include, 'openssl', 'ssl.h')) ? include : undefined;
}

/** Makes the TLS handshake non-blocking and bounded (applyEdits: all or nothing); whether it applied. */
function patchHandshake() {
  return applyEdits(path.join(clientDir, 'src', 'zookeeper.c'), [
    // init_ssl_for_socket: for the handler's own socket (fail_on_error), hand the wait back to the
    // event loop instead of select()ing until the server answers.
    [
      'static int init_ssl_for_socket(zsock_t *fd, zhandle_t *zh, int fail_on_error) {\n',
      '#define NZL_SSL_IN_PROGRESS 1 /* nestjs-zk-lock: handshake under way, resumed on the next event */\n' +
        'static int init_ssl_for_socket(zsock_t *fd, zhandle_t *zh, int fail_on_error) {\n',
    ],
    [
      '            rc = select(sock + 1, &s_rfds, &s_wfds, NULL, &tv);\n',
      '            if (fail_on_error) return NZL_SSL_IN_PROGRESS;\n            rc = select(sock + 1, &s_rfds, &s_wfds, NULL, &tv);\n',
    ],
    // init_ssl_for_socket: a client certificate is optional (the server may not ask for one); the C
    // client loaded cert and key unconditionally and failed on "(null)" without them.
    [
      '        /*CLIENT CA FILE (With Certificate Chain)*/\n',
      '        if (fd->cert->cert != NULL && fd->cert->key != NULL) { /* nestjs-zk-lock: optional */\n        /*CLIENT CA FILE (With Certificate Chain)*/\n',
    ],
    ['        /*MULTIPLE HANDSHAKE*/\n', '        }\n        /*MULTIPLE HANDSHAKE*/\n'],
    // zookeeper_interest, connect() done at once: no handshake here, check_events does it.
    [
      '                if (zh->fd->cert != NULL) {\n                    // We do SSL_connect() here\n                    if (init_ssl_for_handler(zh) != ZOK) {\n                        return ZSSLCONNECTIONERROR;\n                    }\n                }\n',
      '                if (zh->fd->cert != NULL) {\n                    zh->state = ZOO_SSL_CONNECTING_STATE;\n                }\n',
    ],
    // zookeeper_interest: a handshake is timed out like any connect attempt ...
    [
      'if (recv_to <= 0 && zh->state != ZOO_SSL_CONNECTING_STATE) {',
      'if (recv_to <= 0) {',
    ],
    // ... and polls for the direction OpenSSL waits on (writable only before it starts, or when it
    // wants to write: an established socket is always writable, so asking for it would spin).
    [
      '            || zh->state == ZOO_SSL_CONNECTING_STATE) {\n            *interest |= ZOOKEEPER_WRITE;',
      '            || (zh->state == ZOO_SSL_CONNECTING_STATE && !(zh->fd->ssl_sock && SSL_want_read(zh->fd->ssl_sock)))) {\n            *interest |= ZOOKEEPER_WRITE;',
    ],
    // check_events: resume the handshake on either event; return to the event loop while it is
    // under way, and after it completes on a read (the connect request goes on the next write).
    [
      '    if ((events&ZOOKEEPER_WRITE) && (zh->state == ZOO_SSL_CONNECTING_STATE) && zh->fd->cert != NULL) {\n        int rc, error;',
      '    if ((events&(ZOOKEEPER_WRITE|ZOOKEEPER_READ)) && (zh->state == ZOO_SSL_CONNECTING_STATE) && zh->fd->cert != NULL) {\n        int rc, error;',
    ],
    [
      '        // We do SSL_connect() here\n        if (init_ssl_for_handler(zh) != ZOK) {\n            return ZSSLCONNECTIONERROR;\n        }\n    }\n#endif',
      '        rc = init_ssl_for_handler(zh);\n        if (rc == NZL_SSL_IN_PROGRESS || (rc == ZOK && !(events&ZOOKEEPER_WRITE))) {\n            return ZOK;\n        }\n' +
        '        if (rc != ZOK) {\n            /* a CA/cert/key file OpenSSL refused leaves the socket open: close it, or the poll spins */\n' +
        '            if (zh->fd->sock != -1) {\n' +
        '                return handle_socket_error_msg(zh, __LINE__, __func__, ZSSLCONNECTIONERROR, "could not set up TLS");\n' +
        '            }\n            return ZSSLCONNECTIONERROR;\n        }\n    }\n#endif',
    ],
  ]) === undefined;
}

function readStamp() {
  try {
    return JSON.parse(fs.readFileSync(buildStamp, 'utf8'));
  } catch {
    return undefined;
  }
}

const stamp = readStamp();
if (!fs.existsSync(clientLibrary) || !stamp || stamp.version !== BUILD_VERSION) {
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
  const sslHeaders = nodeOpenSslHeaders();
  let withoutTls = !process.versions.openssl
    ? 'this Node.js has no OpenSSL (process.versions.openssl is unset), so there are no SSL_* symbols to take from it'
    : sslHeaders
      ? undefined
      : 'this Node.js installation has no OpenSSL headers (include/node/openssl)';
  if (!withoutTls && !patchHandshake()) withoutTls = "the C client's TLS handshake code is not the one this script knows how to make non-blocking";
  // As the zookeeper package configures it, but optimised (it builds with CFLAGS=-w, so -O0).
  run('configure the C client', './configure', [
    'CFLAGS=-w -O2',
    '--without-syncapi',
    '--disable-shared',
    '--with-pic',
    '--without-cppunit',
    // configure turns Cyrus SASL on by itself when libsasl2-dev is installed, and the addon would then
    // need libsasl2 at load time: off, so the build is the same on every machine (see docs/operations.md, SASL).
    '--without-sasl',
    ...(withoutTls
      ? ['--without-openssl']
      : [`CPPFLAGS=-I${sslHeaders}`, '--with-openssl', 'ac_cv_lib_ssl_SSL_CTX_new=yes']),
    '--enable-silent-rules',
    '--quiet',
  ], { cwd: clientDir });
  run('make the C client', 'make', ['--no-print-directory', '--quiet', 'libzookeeper_st.la'], { cwd: clientDir });
  if (withoutTls) say(`the C client is built without TLS: ${withoutTls}. The tls option will be refused.`);
  fs.writeFileSync(buildStamp, JSON.stringify({ version: BUILD_VERSION, tls: !withoutTls, why: withoutTls }) + '\n');
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
