'use strict';
/**
 * The ZooKeeper C client (3.8.0, single-threaded API) that the addon links statically: its sources
 * ship with this package (native/zookeeper-client-c.tar.gz: the C client from Apache ZooKeeper 3.8.0
 * as the `zookeeper` npm package 7.3.0 ships it in deps/, with its autom4te.cache/ and tests/
 * removed; Apache License 2.0, LICENSE and NOTICE.txt inside). buildClient() extracts them, makes
 * the edits below (each checked), configures and makes libzookeeper_st.a, for this machine (the
 * install script) or for another one with a cross compiler (scripts/cross-build.cjs).
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/** The C client's sources, next to this file. */
const SOURCES = path.join(__dirname, 'zookeeper-client-c.tar.gz');
const STAMP = 'nestjs-zk-lock-build.json';

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
function applyEdits(dir, file, edits) {
  let text = fs.readFileSync(file, 'utf8');
  for (const [anchor, replacement] of edits) {
    const at = text.indexOf(anchor);
    if (at === -1 || text.indexOf(anchor, at + 1) !== -1) {
      return `${path.relative(dir, file)}: expected exactly one "${anchor.trim().split('\n')[0]}" (found ${at === -1 ? 'none' : 'several'})`;
    }
    text = text.slice(0, at) + replacement + text.slice(at + anchor.length);
  }
  fs.writeFileSync(file, text);
  return undefined;
}

function editClient(dir) {
  const adaptor = path.join(dir, 'src', 'zk_adaptor.h');
  const client = path.join(dir, 'src', 'zookeeper.c');
  const lastPing = '    struct timeval last_ping;           // time last PING was sent\n';
  const sendPing = ' int send_ping(zhandle_t* zh)\n {\n';
  const stamp = '    get_system_time(&zh->last_ping);\n';
  const reconnect = '        zh->last_ping = now;\n';
  const reply = '        if (hdr.xid == PING_XID) {\n';
  const created = '    zh->fd = calloc(1, sizeof(zsock_t));\n';
  const problem =
    applyEdits(dir, adaptor, [
      [
        lastPing,
        `${lastPing}    /* nestjs-zk-lock (native/c-client.cjs): pings on the current connection, for ping_answered_age */
    int64_t nzl_pings_sent;             // pings sent
    int64_t nzl_pings_answered;         // ping replies received
    int64_t nzl_ping_sent_ns[NZL_PING_RING]; // CLOCK_MONOTONIC send time of ping k at [k % NZL_PING_RING]
    int64_t nzl_ping_answered_ns;       // send time (lower bound) of the latest answered ping, or -1
`,
      ],
      ['#define PING_XID -2\n', '#define PING_XID -2\n#define NZL_PING_RING 8\n'],
    ]) ??
    applyEdits(dir, client, [
      [
        sendPing,
        `/* nestjs-zk-lock (native/c-client.cjs): the send times of pings, for ping_answered_age. */
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

function nodeOpenSslHeaders(nodedir) {
  const include = path.join(nodedir, 'include', 'node');
  return fs.existsSync(path.join(include, 'openssl', 'ssl.h')) ? include : undefined;
}

/** Makes the TLS handshake non-blocking and bounded (applyEdits: all or nothing); whether it applied. */
function patchHandshake(dir) {
  return applyEdits(dir, path.join(dir, 'src', 'zookeeper.c'), [
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

// --- TLS host names: the C client's own handshake checks the name each server was reached by --------
//
// The C client checks the server's chain only (SSL_VERIFY_PEER): any certificate the CA signed, for
// any host, would do. patchHostCheck() makes every handshake it starts (each connect and reconnect,
// and the read-only mode's probe of a read/write server) expect the name that server was reached by,
// before SSL_connect: a DNS name (SSL_set1_host, no partial wildcards, and sent as SNI) or an IP
// address (X509_VERIFY_PARAM_set1_ip_asc); OpenSSL then fails the handshake on a mismatch, and the
// C client goes on to the next server as after any failed handshake. The C client is given
// addresses only (lib/zookeeper/connect-string.ts resolves names off the event loop), so the addon
// tells it, per address, the name it was looked up from (zoo_nzl_tls_expect); an address told
// nothing is checked as the IP it is. zoo_nzl_tls_any_name(zh, 1) turns the check off
// (tls.verifyHostname: false). Applied after patchHandshake, or the C client is built without TLS.

/** Makes the TLS handshake check the server's name (applyEdits: all or nothing); whether it applied. */
function patchHostCheck(dir) {
  const handle = '    struct sockaddr_storage addr_rw_server; // address of last known read/write server found.\n';
  const initSsl = '/*\n * use this function, if you want to init SSL for the socket currently registered in the zookeeper handler\n */\n';
  const sslFd = '        SSL_set_fd(fd->ssl_sock, fd->sock);\n';
  const connectFailed = '                if (fail_on_error) {\n                    return handle_socket_error_msg(zh, __LINE__, __func__, ZSSLCONNECTIONERROR, "error in ssl connect");\n';
  const destroyed = '    addrvec_free(&zh->addrs);\n\n    if (zh->chroot != NULL) {\n';
  return (
    applyEdits(dir, path.join(dir, 'src', 'zk_adaptor.h'), [
      ['struct _zhandle {\n', '/* nestjs-zk-lock (native/c-client.cjs): the name a server address was reached by */\nstruct nzl_tls_name {\n    struct sockaddr_storage addr;\n    char name[256];\n};\n\nstruct _zhandle {\n'],
      [
        handle,
        `${handle}    /* nestjs-zk-lock (native/c-client.cjs): TLS host names, see zoo_nzl_tls_expect */
    int nzl_tls_any_name;               // 1: the certificate's names are not checked
    struct nzl_tls_name *nzl_tls_names; // the host name each address was looked up from
    int nzl_tls_names_count;
`,
      ],
    ]) === undefined &&
    applyEdits(dir, path.join(dir, 'src', 'zookeeper.c'), [
      [
        initSsl,
        `/* nestjs-zk-lock (native/c-client.cjs): host-name checks in the TLS handshake. */
#include <openssl/x509v3.h>

static int nzl_same_endpoint(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const struct sockaddr_in *) a, *y = (const struct sockaddr_in *) b;
        return x->sin_port == y->sin_port && memcmp(&x->sin_addr, &y->sin_addr, sizeof(x->sin_addr)) == 0;
    }
    if (a->ss_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *) a, *y = (const struct sockaddr_in6 *) b;
        return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
    }
    return 0;
}

/* address (IPv4 or IPv6, numeric) and port into addr; 0, or -1 when it is not an address */
static int nzl_endpoint(const char *address, int port, struct sockaddr_storage *addr)
{
    memset(addr, 0, sizeof(*addr));
    if (inet_pton(AF_INET, address, &((struct sockaddr_in *) addr)->sin_addr) == 1) {
        addr->ss_family = AF_INET;
        ((struct sockaddr_in *) addr)->sin_port = htons(port);
        return 0;
    }
    if (inet_pton(AF_INET6, address, &((struct sockaddr_in6 *) addr)->sin6_addr) == 1) {
        addr->ss_family = AF_INET6;
        ((struct sockaddr_in6 *) addr)->sin6_port = htons(port);
        return 0;
    }
    return -1;
}

/* Tells the handle that address:port was looked up from the host name \`name\`: a TLS handshake with
 * it expects a certificate for that name (an address told nothing is expected to be named by its IP).
 * Told again, the new name replaces the old. ZOK, ZBADARGUMENTS, or ZSYSTEMERROR (out of memory). */
int zoo_nzl_tls_expect(zhandle_t *zh, const char *address, int port, const char *name)
{
    struct sockaddr_storage addr;
    struct nzl_tls_name *grown;
    int i;
    if (zh == NULL || address == NULL || name == NULL || port <= 0 || port > 65535
            || strlen(name) == 0 || strlen(name) >= sizeof(grown->name) || nzl_endpoint(address, port, &addr) != 0)
        return ZBADARGUMENTS;
    for (i = 0; i < zh->nzl_tls_names_count; i++)
        if (nzl_same_endpoint(&zh->nzl_tls_names[i].addr, &addr)) {
            strcpy(zh->nzl_tls_names[i].name, name);
            return ZOK;
        }
    grown = realloc(zh->nzl_tls_names, (zh->nzl_tls_names_count + 1) * sizeof(*grown));
    if (grown == NULL)
        return ZSYSTEMERROR;
    zh->nzl_tls_names = grown;
    grown[zh->nzl_tls_names_count].addr = addr;
    strcpy(grown[zh->nzl_tls_names_count].name, name);
    zh->nzl_tls_names_count++;
    return ZOK;
}

/* any != 0: accept a certificate the CA signed for any name (tls.verifyHostname: false) */
void zoo_nzl_tls_any_name(zhandle_t *zh, int any)
{
    if (zh != NULL)
        zh->nzl_tls_any_name = any != 0;
}

/* The name the server at addr is expected to hold: the host name it was looked up from, or its IP. */
static const char *nzl_expected_name(zhandle_t *zh, const struct sockaddr_storage *addr, char *ip, size_t size)
{
    int i;
    for (i = 0; i < zh->nzl_tls_names_count; i++)
        if (nzl_same_endpoint(&zh->nzl_tls_names[i].addr, addr))
            return zh->nzl_tls_names[i].name;
    if (addr->ss_family == AF_INET)
        return inet_ntop(AF_INET, &((const struct sockaddr_in *) addr)->sin_addr, ip, size);
    if (addr->ss_family == AF_INET6)
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) addr)->sin6_addr, ip, size);
    return NULL;
}

/* The address of the server fd is connected to: the handle's own, or the read-only mode's probe's. */
static const struct sockaddr_storage *nzl_peer(zhandle_t *zh, zsock_t *fd)
{
    return fd == zh->fd ? &zh->addr_cur : &zh->addr_rw_server;
}

/* Before SSL_connect: the name the handshake must find in the server's certificate; 0, or -1. */
static int nzl_tls_check_name(zhandle_t *zh, zsock_t *fd)
{
    char ip[INET6_ADDRSTRLEN];
    unsigned char raw[sizeof(struct in6_addr)];
    const char *name;
    if (zh->nzl_tls_any_name)
        return 0;
    name = nzl_expected_name(zh, nzl_peer(zh, fd), ip, sizeof(ip));
    if (name == NULL)
        return -1;
    if (inet_pton(AF_INET, name, raw) == 1 || inet_pton(AF_INET6, name, raw) == 1)
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(fd->ssl_sock), name) == 1 ? 0 : -1;
    SSL_set_hostflags(fd->ssl_sock, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (SSL_set1_host(fd->ssl_sock, name) != 1)
        return -1;
    /* SNI, for servers that choose their certificate by the name asked for */
    return SSL_set_tlsext_host_name(fd->ssl_sock, name) == 1 ? 0 : -1;
}

/* A failed handshake whose certificate was refused says why (the C client logs only that it failed). */
static void nzl_tls_log_refusal(zhandle_t *zh, zsock_t *fd)
{
    char ip[INET6_ADDRSTRLEN];
    const struct sockaddr_storage *peer = nzl_peer(zh, fd);
    long verify = SSL_get_verify_result(fd->ssl_sock);
    if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        const char *name = nzl_expected_name(zh, peer, ip, sizeof(ip));
        LOG_ERROR(LOGCALLBACK(zh), "TLS: the certificate of %s does not name %s, the name it was reached by: refused (tls.verifyHostname)",
                  format_endpoint_info(peer), name ? name : "?");
    } else if (verify != X509_V_OK) {
        LOG_ERROR(LOGCALLBACK(zh), "TLS: the certificate of %s was refused: %s", format_endpoint_info(peer), X509_verify_cert_error_string(verify));
    }
}

${initSsl}`,
      ],
      [
        sslFd,
        `${sslFd}        if (nzl_tls_check_name(zh, fd) != 0) {
            if (fail_on_error) {
                return handle_socket_error_msg(zh, __LINE__, __func__, ZSSLCONNECTIONERROR, "could not set the TLS host name to check");
            }
            LOG_ERROR(LOGCALLBACK(zh), "could not set the TLS host name to check");
            return ZSSLCONNECTIONERROR;
        }
`,
      ],
      [connectFailed, `                nzl_tls_log_refusal(zh, fd);\n${connectFailed}`],
      [destroyed, `    free(zh->nzl_tls_names);\n    zh->nzl_tls_names = NULL;\n    zh->nzl_tls_names_count = 0;\n${destroyed}`],
    ]) === undefined
  );
}

// --- SASL: the C client's own SASL support, built against nestjs-zk-lock's SASL client -------------
//
// The C client speaks SASL (zk_sasl.c, and zookeeper.c under HAVE_CYRUS_SASL_H: opcode 102 requests
// before the session counts as connected, other requests held back until authentication completes,
// authentication again on every reconnect, ZOO_AUTH_FAILED_STATE on failure) through a handful of
// Cyrus SASL calls. It is built with that support on, against native/src/sasl/sasl.h, whose calls
// native/src/nzl_sasl.c implements (compiled into the addon by binding.gyp): DIGEST-MD5 with no
// library at all, GSSAPI on MIT Kerberos loaded at run time only when that mechanism is configured.
// So the addon never needs libsasl2 (configure's library check is answered through its cache
// variable; its header check compiles against our header), and a machine with libsasl2-dev
// installed builds the same addon as one without.
// patchSasl() adds one entry point: SASL over TLS (upstream has zookeeper_init_ssl and
// zookeeper_init_sasl, each without the other).

/** The directory holding nestjs-zk-lock's sasl/sasl.h. */
const SASL_INCLUDE = path.join(__dirname, 'src');

function patchSasl(dir) {
  const problem = applyEdits(dir, path.join(dir, 'src', 'zookeeper.c'), [
    [
      '/**\n * Create a zookeeper handle associated with the given host and port.\n */\nstatic zhandle_t *zookeeper_init_internal(',
      '/* nestjs-zk-lock (native/c-client.cjs): SASL parameters for the zookeeper_init_ssl that\n' +
        ' * zoo_nzl_init_ssl_sasl makes on this thread. */\nstatic __thread void *nzl_ssl_sasl_params;\n\n' +
        '/**\n * Create a zookeeper handle associated with the given host and port.\n */\nstatic zhandle_t *zookeeper_init_internal(',
    ],
    [
      '    if (sasl_params) {\n        zh->sasl_client = zoo_sasl_client_create(',
      '    if (!sasl_params) sasl_params = nzl_ssl_sasl_params;\n    if (sasl_params) {\n        zh->sasl_client = zoo_sasl_client_create(',
    ],
    [
      '        log_callback_fn log_callback, zoo_sasl_params_t *sasl_params)\n{\n    return zookeeper_init_internal(host, watcher, recv_timeout, clientid, context, flags, log_callback, NULL, sasl_params);\n}\n',
      '        log_callback_fn log_callback, zoo_sasl_params_t *sasl_params)\n{\n    return zookeeper_init_internal(host, watcher, recv_timeout, clientid, context, flags, log_callback, NULL, sasl_params);\n}\n' +
        '#ifdef HAVE_OPENSSL_H\n/* nestjs-zk-lock (native/c-client.cjs): zookeeper_init_ssl, with SASL. */\n' +
        'zhandle_t *zoo_nzl_init_ssl_sasl(const char *host, const char *cert, watcher_fn watcher, int recv_timeout,\n' +
        '        const clientid_t *clientid, void *context, int flags, zoo_sasl_params_t *sasl_params)\n{\n' +
        '    zhandle_t *zh;\n    nzl_ssl_sasl_params = sasl_params;\n' +
        '    zh = zookeeper_init_ssl(host, cert, watcher, recv_timeout, clientid, context, flags);\n' +
        '    nzl_ssl_sasl_params = NULL;\n    return zh;\n}\n#endif\n',
    ],
  ]);
  if (problem) throw new Error(`${problem}: this version of the C client is not the one nestjs-zk-lock's SASL edits were written for`);
}

function readStamp(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, STAMP), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Builds the C client into `dir` (libzookeeper_st.a, position-independent), unless this version of
 * the build is already there, and returns { tls, why }: whether it has TLS, and why not.
 * - run(what, command, args, options): runs one step; does not return when it fails;
 * - fail(what, message): stops the build; does not return;
 * - say(message): tells the user;
 * - nodedir: the Node.js installation whose headers (include/node/openssl) the C client is compiled against;
 * - host: a GNU triplet to cross-compile for (`aarch64-linux-gnu`: with aarch64-linux-gnu-gcc), or
 *   undefined for this machine.
 */
function buildClient(dir, { run, fail, say, nodedir, host }) {
  // A build is reused only when made by this very file from these very sources, for the same host.
  const recipe = crypto.createHash('sha256').update(fs.readFileSync(__filename)).update(fs.readFileSync(SOURCES))
    .update(fs.readFileSync(path.join(SASL_INCLUDE, 'sasl', 'sasl.h'))).digest('hex');
  const stamp = readStamp(dir);
  if (fs.existsSync(path.join(dir, '.libs', 'libzookeeper_st.a')) && stamp && stamp.recipe === recipe && stamp.host === host) {
    return { tls: stamp.tls, why: stamp.why };
  }
  say(`building the ZooKeeper C client${host ? ` for ${host}` : ''} (about 15 seconds)`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  run('extract the C client', 'tar', ['-xzf', SOURCES, '-C', dir, '--strip-components=1', '--no-same-owner']);
  try {
    editClient(dir);
    patchSasl(dir);
  } catch (error) {
    fail('edit the C client', error.message);
  }
  const sslHeaders = nodeOpenSslHeaders(nodedir);
  let why = !process.versions.openssl
    ? 'this Node.js has no OpenSSL (process.versions.openssl is unset), so there are no SSL_* symbols to take from it'
    : sslHeaders
      ? undefined
      : `the Node.js installation at ${nodedir} has no OpenSSL headers (include/node/openssl)`;
  if (!why && !patchHandshake(dir)) why = "the C client's TLS handshake code is not the one this script knows how to make non-blocking";
  if (!why && !patchHostCheck(dir)) why = "the C client's TLS handshake code is not the one this script knows how to make check host names";
  // As the zookeeper package configures it, but optimised (it builds with CFLAGS=-w, so -O0).
  run('configure the C client', './configure', [
    'CFLAGS=-w -O2',
    // Cross-compiling, configure cannot test files (AC_CHECK_FILES): the generated sources are in the tarball.
    ...(host ? [`--host=${host}`, `CC=${host}-gcc`, 'ac_cv_file___generated_zookeeper_jute_c=yes', 'ac_cv_file___generated_zookeeper_jute_h=yes'] : []),
    '--without-syncapi',
    '--disable-shared',
    '--with-pic',
    '--without-cppunit',
    // SASL through nestjs-zk-lock's own client, never libsasl2 (see the SASL comment above).
    '--with-sasl',
    'ac_cv_lib_sasl2_sasl_client_init=yes',
    `CPPFLAGS=${why ? '' : `-I${sslHeaders} `}-I${SASL_INCLUDE}`,
    ...(why ? ['--without-openssl'] : ['--with-openssl', 'ac_cv_lib_ssl_SSL_CTX_new=yes']),
    '--enable-silent-rules',
    '--quiet',
  ], { cwd: dir });
  run('make the C client', 'make', ['--no-print-directory', '--quiet', 'libzookeeper_st.la'], { cwd: dir });
  if (why) say(`the C client is built without TLS: ${why}. The tls option will be refused.`);
  fs.writeFileSync(path.join(dir, STAMP), JSON.stringify({ recipe, host, tls: !why, why, sasl: true }) + '\n');
  return { tls: !why, why };
}

module.exports = { SOURCES, buildClient };
