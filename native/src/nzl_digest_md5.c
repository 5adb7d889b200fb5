/*
 * nestjs-zk-lock's SASL DIGEST-MD5 client (RFC 2831), as ZooKeeper's Java server speaks it.
 * ZooKeeper's client starts DIGEST-MD5 with an empty message (zk_sasl.c); the server's challenge
 * names the realm ("zk-sasl-md5") and a nonce; the answer proves the password with qop=auth (no
 * security layer) for the digest-uri "zookeeper/zk-sasl-md5"; the server's rspauth must then prove
 * that it knows the password too, or the conversation fails (a server that accepts anyone is refused).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>
#include "nzl_md5.h"
#include "nzl_sasl.h"

static void hex(const unsigned char *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

/* One directive of a challenge: its name, and its value unquoted into `value` (at most size - 1
 * bytes). Returns where the next directive starts, or NULL at the end or on a malformed one. */
static const char *directive(const char *p, const char *end, char *name, size_t namesize, char *value, size_t size, int *bad)
{
    size_t n = 0, v = 0;
    while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) p++;
    if (p >= end) return NULL;
    while (p < end && *p != '=' && *p != ',' && n + 1 < namesize) name[n++] = *p++;
    name[n] = '\0';
    if (p >= end || *p != '=') { *bad = 1; return NULL; }
    p++;
    if (p < end && *p == '"') {
        for (p++; p < end && *p != '"'; p++) {
            if (*p == '\\' && p + 1 < end) p++;
            if (v + 1 < size) value[v++] = *p;
        }
        if (p >= end) { *bad = 1; return NULL; }
        p++;
    } else {
        while (p < end && *p != ',' && *p != ' ' && *p != '\t' && v + 1 < size) value[v++] = *p++;
    }
    value[v] = '\0';
    return p;
}

/* Appends s to a quoted-string value, escaping '"' and '\\'. */
static size_t quoted(char *out, size_t at, size_t size, const char *s)
{
    for (; *s && at + 3 < size; s++) {
        if (*s == '"' || *s == '\\') out[at++] = '\\';
        out[at++] = *s;
    }
    out[at] = '\0';
    return at;
}

static void md5_hex_of(const char *a, const char *b, char out[33])
{
    nzl_md5_t md5;
    unsigned char digest[16];
    nzl_md5_init(&md5);
    nzl_md5_update(&md5, a, strlen(a));
    nzl_md5_update(&md5, b, strlen(b));
    nzl_md5_final(&md5, digest);
    hex(digest, 16, out);
}

/* HEX(KD(HEX(H(A1)), nonce:nc:cnonce:qop:HEX(H(A2)))) for A2 = a2prefix digest-uri. */
static void digest_response(const char *ha1, const char *nonce, const char *cnonce, const char *a2prefix, const char *uri, char out[33])
{
    char ha2[33], text[1024];
    md5_hex_of(a2prefix, uri, ha2);
    snprintf(text, sizeof(text), ":%s:00000001:%s:auth:%s", nonce, cnonce, ha2);
    md5_hex_of(ha1, text, out);
}

static int digest_challenge(sasl_conn_t *conn, const char *in, unsigned inlen)
{
    const nzl_sasl_config_t *c = conn->config;
    const char *p = in, *end = in + inlen;
    char name[32], value[512], realm[512] = "", nonce[512] = "", uri[512], cnonce[33], ha1[33], response[33];
    char message[2048];
    int bad = 0, auth_offered = 0, has_qop = 0, md5_sess = 0;
    unsigned char random[16], digest[16];
    nzl_md5_t md5;
    size_t at;

    while ((p = directive(p, end, name, sizeof(name), value, sizeof(value), &bad)) != NULL) {
        if (strcasecmp(name, "realm") == 0 && !realm[0]) snprintf(realm, sizeof(realm), "%s", value);
        else if (strcasecmp(name, "nonce") == 0) snprintf(nonce, sizeof(nonce), "%s", value);
        else if (strcasecmp(name, "algorithm") == 0) md5_sess = strcasecmp(value, "md5-sess") == 0;
        else if (strcasecmp(name, "qop") == 0) {
            char *save = NULL, *token;
            has_qop = 1;
            for (token = strtok_r(value, ", \t", &save); token; token = strtok_r(NULL, ", \t", &save)) {
                if (strcasecmp(token, "auth") == 0) auth_offered = 1;
            }
        }
    }
    if (bad || !nonce[0] || !md5_sess) {
        return nzl_sasl_fail(conn, SASL_BADPROT, "the server's DIGEST-MD5 challenge is malformed (no nonce, or an algorithm other than md5-sess)");
    }
    if (has_qop && !auth_offered) {
        return nzl_sasl_fail(conn, SASL_BADPROT, "the server's DIGEST-MD5 challenge does not offer qop=auth (it asks for a security layer, which is not supported)");
    }
    if (uv_random(NULL, NULL, random, sizeof(random), 0, NULL) != 0) {
        return nzl_sasl_fail(conn, SASL_FAIL, "the operating system's random source failed");
    }
    hex(random, sizeof(random), cnonce);
    snprintf(uri, sizeof(uri), "%s/%s", conn->service, conn->host);

    /* A1 = H(username:realm:password):nonce:cnonce (no authzid), as UTF-8 as Java's server hashes it. */
    nzl_md5_init(&md5);
    nzl_md5_update(&md5, c->user, strlen(c->user));
    nzl_md5_update(&md5, ":", 1);
    nzl_md5_update(&md5, realm, strlen(realm));
    nzl_md5_update(&md5, ":", 1);
    nzl_md5_update(&md5, c->password, strlen(c->password));
    nzl_md5_final(&md5, digest);
    nzl_md5_init(&md5);
    nzl_md5_update(&md5, digest, 16);
    nzl_md5_update(&md5, ":", 1);
    nzl_md5_update(&md5, nonce, strlen(nonce));
    nzl_md5_update(&md5, ":", 1);
    nzl_md5_update(&md5, cnonce, strlen(cnonce));
    nzl_md5_final(&md5, digest);
    hex(digest, 16, ha1);
    memset(digest, 0, sizeof(digest));

    digest_response(ha1, nonce, cnonce, "AUTHENTICATE:", uri, response);
    digest_response(ha1, nonce, cnonce, ":", uri, conn->rspauth);
    memset(ha1, 0, sizeof(ha1));

    at = (size_t) snprintf(message, sizeof(message), "charset=utf-8,username=\"");
    at = quoted(message, at, sizeof(message), c->user);
    at += (size_t) snprintf(message + at, sizeof(message) - at, "\",realm=\"");
    at = quoted(message, at, sizeof(message), realm);
    at += (size_t) snprintf(message + at, sizeof(message) - at, "\",nonce=\"");
    at = quoted(message, at, sizeof(message), nonce);
    at += (size_t) snprintf(message + at, sizeof(message) - at, "\",nc=00000001,cnonce=\"%s\",digest-uri=\"", cnonce);
    at = quoted(message, at, sizeof(message), uri);
    at += (size_t) snprintf(message + at, sizeof(message) - at, "\",maxbuf=65536,response=%s,qop=auth", response);
    if (at >= sizeof(message) - 1) return nzl_sasl_fail(conn, SASL_BADPARAM, "the DIGEST-MD5 user name or the server's nonce is too long");
    return nzl_sasl_output(conn, message, at) == SASL_OK ? SASL_CONTINUE : SASL_NOMEM;
}

static int digest_rspauth(sasl_conn_t *conn, const char *in, unsigned inlen)
{
    const char *p = in, *end = in + inlen;
    char name[32], value[128];
    int bad = 0, proven = 0;
    while ((p = directive(p, end, name, sizeof(name), value, sizeof(value), &bad)) != NULL) {
        if (strcasecmp(name, "rspauth") == 0) proven = strcasecmp(value, conn->rspauth) == 0;
    }
    if (!proven) {
        return nzl_sasl_fail(conn, SASL_BADAUTH,
                             "the server did not prove that it knows the DIGEST-MD5 password (wrong or missing rspauth): it is not the server it claims to be");
    }
    return nzl_sasl_output(conn, "", 0);
}

int nzl_digest_md5_step(sasl_conn_t *conn, const char *in, unsigned inlen)
{
    if (conn->step == 0) return digest_challenge(conn, in, inlen);
    if (conn->step == 1) return digest_rspauth(conn, in, inlen);
    return nzl_sasl_fail(conn, SASL_BADPROT, "the server sent more DIGEST-MD5 messages than the mechanism has");
}
