/*
 * The native addon of nestjs-zk-lock: the ZooKeeper C client (single-threaded API) bound to Node's
 * event loop, on Node-API (node-addon-api, NAPI_VERSION 8), so that one build loads in every Node.js
 * version the package supports.
 *
 * Derived from src/node-zk.cpp of the `zookeeper` npm package 7.3.0
 * (https://github.com/yfinkelstein/node-zookeeper), MIT licence, Copyright 2010 Yuri Finkelstein and
 * the package's contributors; the licence is in ../LICENSE-node-zookeeper. It links the C client that
 * native/install.cjs builds from that package's sources (c-client/.libs/libzookeeper_st.a), and
 * keeps its JavaScript interface, plus a_multi (zoo_amulti), a_remove_data_watches
 * (zoo_aremove_all_watches) and ping_answered_age (below); lib/zookeeper/native-client.ts types it.
 *
 * What is changed, and why (see yield(), armPoll(), afterRequest() and realInit()):
 * - The poll watcher stays armed while the connection it watches lasts. Upstream stopped and
 *   restarted it on every readiness check: two epoll_ctl calls each time, and a libuv abort
 *   (uv__epoll_ctl_prep) when the C client had closed the socket in between, which it does inside a
 *   request call whose send fails on a reset connection. Here the watcher is only updated when the
 *   events of interest change, and replaced by a fresh one whenever the socket may have changed:
 *   another descriptor, or any state but connected (a new socket can reuse the old number).
 * - After every request call, a socket the C client dropped inside the call is noticed at once
 *   (afterRequest), and its watcher is closed before the event loop polls again.
 * - Host names are resolved when the client (re)connects, not on every readiness check
 *   (zoo_set_servers_resolution_delay -1): upstream's default asked the kernel for the machine's
 *   addresses over netlink, seven system calls, on every one of them.
 * - The socket is marked close-on-exec, so child processes do not inherit the session's connection.
 * - While no socket is open (a connect refused at once, the pause after every server failed), the
 *   timer is set to the C client's own delay; upstream left it at the last connection's period, up
 *   to a third of the session timeout, which every reconnect during an election waited out.
 * - uv_poll_init's result is checked.
 * - Built with optimisation (upstream builds with -O0).
 *
 * Node-API port (this file was a nan addon before):
 * - C++ exceptions are off (NAPI_DISABLE_CPP_EXCEPTIONS): the C client calls back into this file
 *   through C frames, which an exception must never cross. Errors are checked where they can arise.
 * - Nothing is kept per request or per watch once it is over. Every request's callback lives in a
 *   Request, linked into its handle's list while the C client may still call it, and freed when its
 *   completion ran, when the call was refused (no completion will run), and, for whatever the C
 *   client may forget without calling (an add_auth not yet answered, an aw_* watch still set), when
 *   the handle closes. An aw_* watch function is freed when its watch fires, when its request set
 *   no watch, or when a_remove_data_watches removed it (upstream never freed it).
 * - Requests made while the handle closes (from a callback zookeeper_close runs) are refused with
 *   ZINVALIDSTATE instead of being queued on a handle being destroyed, where they were lost.
 * - JavaScript is called with MakeCallback, from the event loop in a new async context per call (the
 *   "node-zk:*" resources, as upstream's Nan::AsyncResource did); AsyncLocalStorage sees no store in
 *   the callbacks, as before, also in those run inside close() (see callJs). An exception thrown by a callback
 *   becomes an uncaught exception (napi_fatal_exception) when the C client ran from the event loop,
 *   and is thrown to the caller when it ran inside a call from JavaScript (close, a request).
 * - Per-environment state (instance data) and an async cleanup hook: when a worker thread or the
 *   environment ends with handles open, they are closed (no JavaScript called), and the hook ends
 *   only once libuv has closed their poll and timer handles, so the loop closes cleanly.
 */
#include <string.h>
#include <string>
#include <vector>
#include <strings.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <napi.h>
#include <uv.h>
#undef THREADED
#include <zookeeper.h>
#include "zk_log.h"
#ifdef HAVE_CYRUS_SASL_H
#include "zk_sasl_setup.h"
#endif

// Added to the C client by native/install.cjs (see there): nanoseconds, on CLOCK_MONOTONIC, since the
// send of the most recent ping the server answered on the current connection, or -1.
extern "C" int64_t zoo_nzl_ping_answered_age_ns(zhandle_t *zh);
#ifdef HAVE_OPENSSL_H
// Added to the C client by native/c-client.cjs (patchHostCheck): the name a TLS handshake with an
// address expects in the server's certificate (the host name it was looked up from), and the switch
// that turns the check off.
extern "C" int zoo_nzl_tls_expect(zhandle_t *zh, const char *address, int port, const char *name);
extern "C" void zoo_nzl_tls_any_name(zhandle_t *zh, int any);
#endif

// @param c must be in [0-15]
// @return '0'..'9','A'..'F'
static inline char fourBitsToHex(unsigned char c) {
    return ((c <= 9) ? ('0' + c) : ('7' + c));
}

// @param h must be one of '0'..'9','A'..'F'
// @return [0-15]
static inline unsigned char hexToFourBits(char h) {
    return (unsigned char) ((h <= '9') ? (h - '0') : (h - '7'));
}

namespace zk {

#define ZOOKEEPER_PASSWORD_BYTE_COUNT 16

// A created node's path in a_multi: the path asked for, its 10-digit sequence suffix and the terminator.
#define MULTI_PATH_MAX 1024
// The shortest wait before the C client is asked again after a connect it failed at once: it has
// moved on to the next server; without a floor, a failure that recurs (no file descriptors) would spin.
#define RETRY_FLOOR_MS 10

class ZooKeeper;

// Per Node.js environment (main thread, each worker): the handles open in it, and its cleanup hook.
struct AddonData {
    napi_env env = nullptr;
    ZooKeeper *open = nullptr;            // handles between init and close (intrusive list)
    bool tearing_down = false;            // the environment is ending: no JavaScript is called
    int closing_uv_handles = 0;           // uv handles closed whose close callback has not run yet
    napi_async_cleanup_hook_handle hook = nullptr;
    bool hook_running = false;
    void maybeFinishCleanup();
};

enum WatchKind { WATCH_NONE = 0, WATCH_DATA, WATCH_EXISTS, WATCH_CHILD, WATCH_CONFIG };

// One request in flight, or one aw_* watch set: what the C client's callback needs, freed when over.
struct Request {
    Request *prev = nullptr;
    Request *next = nullptr;
    ZooKeeper *zk;
    Napi::FunctionReference cb;        // the completion callback, until it ran
    Napi::FunctionReference watcher;   // aw_*: the watch function, until the watch is over
    WatchKind watch_kind = WATCH_NONE;
    bool watch_active = false;         // the C client holds the watch (its request answered OK)
    std::string path;                  // aw_* data watches and a_remove_data_watches: the path
    struct ACL_vector *acl = nullptr;  // a_set_acl: the ACL, kept until the completion (as upstream)
    std::vector<zoo_op_result_t> results;  // a_multi: written by the C client until its completion
    std::vector<char> created_paths;

    explicit Request(ZooKeeper *owner) : zk(owner) {}
    ~Request() {
        if (acl) {
            deallocate_ACL_vector(acl);
            free(acl);
        }
    }
};

// The uv handles, apart from the object: their memory goes in their close callbacks, which may run
// after the object is gone (or while the environment tears down).
struct PollHandle {
    uv_poll_t poll;
    ZooKeeper *zk;
    AddonData *data;
};
struct TimerHandle {
    uv_timer_t timer;
    ZooKeeper *zk;
    AddonData *data;
};

class ZooKeeper : public Napi::ObjectWrap<ZooKeeper> {
public:
    static Napi::Function Define(Napi::Env env);

    explicit ZooKeeper(const Napi::CallbackInfo &info) : Napi::ObjectWrap<ZooKeeper>(info) {
        LOG_DEBUG("New: creating a new ZooKeeper");
        data = info.Env().GetInstanceData<AddonData>();
        napi_get_uv_event_loop(info.Env(), &loop);
        memset(&myid, 0, sizeof(myid));
    }

    ~ZooKeeper() override {
        // A handle is referenced from init until its timer is closed, so one that is collected is
        // closed; at the environment's end the cleanup hook closed it first.
        LOG_INFO("ZooKeeper destructor invoked");
#ifdef HAVE_CYRUS_SASL_H
        delete sasl;  // after the handle: its SASL client used these parameters until zookeeper_close
#endif
    }

    // A call from JavaScript (a method): exceptions thrown by callbacks run inside it go to its caller.
    struct JsCall {
        ZooKeeper *zk;
        explicit JsCall(ZooKeeper *z) : zk(z) { zk->js_depth++; }
        ~JsCall() {
            if (--zk->js_depth == 0 && !zk->deferred_error.IsEmpty()) {
                Napi::Value error = zk->deferred_error.Value();
                zk->deferred_error.Reset();
                napi_throw(zk->Env(), error);
            }
        }
    };

    // A call into the C client, which may run completions and watchers: records it may still use
    // are not freed (by a close) until the outermost such call has returned.
    struct CCall {
        ZooKeeper *zk;
        explicit CCall(ZooKeeper *z) : zk(z) { zk->c_depth++; }
        ~CCall() {
            if (--zk->c_depth == 0 && zk->sweep_pending) zk->sweep();
        }
    };

    bool jsAllowed() const { return !data->tearing_down; }

    // Calls fn(args) with `recv` as this, through MakeCallback (so that process.nextTick callbacks
    // and microtasks run after it, when it is the outermost call). AsyncLocalStorage sees no store
    // there, as with upstream's nan binding (whose MakeCallback made `recv` the current resource):
    // - from the event loop (the C client driven by libuv), in a new async context named
    //   `resource` per call, as upstream's Nan::AsyncResource, created where there is no store;
    // - inside a call from JavaScript (completions and the 'close' event that close() runs), in no
    //   async context, whose resource is `recv`: a context created there would carry the caller's
    //   store into the library's close handlers and whatever they start.
    // An exception goes to the JavaScript caller when there is one (see JsCall), otherwise to the
    // process as uncaught.
    void callJs(Napi::Function fn, napi_value recv, const std::vector<napi_value> &args, const char *resource) {
        Napi::Env env = Env();
        if (js_depth > 0) {
            fn.MakeCallback(recv, args, nullptr);
        } else {
            Napi::AsyncContext context(env, resource);
            fn.MakeCallback(recv, args, context);
        }
        callJsFailed();
    }

    // ---- the loop: poll watcher and timer (unchanged logic) ----

    void yield() {
        if (is_closed) {
            LOG_DEBUG("yield: was closed");
            return;
        }

        last_activity = uv_now(loop);

        int oldFd = fd;

        int rc;
        {
            CCall c(this);
            rc = zookeeper_interest(zhandle, &fd, &interest, &tv);
        }
        if (is_closed || !zhandle) return;
        int state = zoo_state(zhandle);

        int64_t delay = tv.tv_sec * 1000 + tv.tv_usec / 1000.;

        // No socket to watch: the C client failed a connect at once (a refused port; it has moved on
        // to the next server, tv 0) or pauses after trying every server (tv a sixtieth of the session
        // timeout). Only the timer brings it back, so it is set to the C client's pacing here;
        // upstream left it repeating at the previous connection's period (up to a third of the
        // session timeout), which stalled every reconnect through an election by that long.
        if (rc || fd == -1) {
            if (rc) LOG_ERROR("yield:zookeeper_interest returned error: %d - %s\n", rc, zerror(rc));
            dropPoll();
            if (rc != ZINVALIDSTATE) {
                int64_t retry = delay < RETRY_FLOOR_MS ? RETRY_FLOOR_MS : delay;
                uv_timer_start(&zk_timer->timer, &zk_timer_cb, retry, retry);
            }
            return;
        }

        int events = (interest & ZOOKEEPER_READ ? UV_READABLE : 0) | (interest & ZOOKEEPER_WRITE ? UV_WRITABLE : 0);
        LOG_DEBUG("Interest in (fd=%i, read=%s, write=%s, timeout=%d)",
                  fd,
                  events & UV_READABLE ? "true" : "false",
                  events & UV_WRITABLE ? "true" : "false",
                  (int) delay);

        // The armed watcher is kept only for the same descriptor of a connection that was, and still
        // is, established. Anything else may be a new socket, possibly with the old number: a fresh
        // watcher then, so libuv never carries a registration over from a closed descriptor.
        bool same_connection = zk_io && fd == oldFd && state == ZOO_CONNECTED_STATE && poll_state == ZOO_CONNECTED_STATE;
        if (!same_connection) {
            dropPoll();
            if (!armPoll(events, state)) {
                return;
            }
        } else if (events != poll_events) {
            uv_poll_start(&zk_io->poll, events, &zk_io_cb);
            poll_events = events;
        }

        uv_timer_start(&zk_timer->timer, &zk_timer_cb, delay, delay);
    }

    static void poll_closed(uv_handle_t *handle) {
        PollHandle *p = reinterpret_cast<PollHandle *>(handle);
        AddonData *d = p->data;
        free(p);
        d->closing_uv_handles--;
        d->maybeFinishCleanup();
    }

    // Closes the poll watcher, if any. uv_close stops it at once (and drops its descriptor from
    // epoll, ignoring a descriptor that is already closed); the memory goes in the close callback.
    void dropPoll() {
        if (zk_io) {
            zk_io->zk = nullptr;
            data->closing_uv_handles++;
            uv_close((uv_handle_t *) &zk_io->poll, poll_closed);
            zk_io = nullptr;
        }
        poll_events = 0;
        poll_state = 0;
    }

    // A new poll watcher on the C client's current descriptor.
    bool armPoll(int events, int state) {
        LOG_DEBUG("yield: creating a new poll handle for %p", (void *) this);
        PollHandle *p = (PollHandle *) malloc(sizeof(PollHandle));
        if (!p) {
            LOG_ERROR("Failed to malloc memory for uv_poll_t");
            return false;
        }
        p->zk = this;
        p->data = data;
        int flags = fcntl(fd, F_GETFD);
        if (flags != -1 && !(flags & FD_CLOEXEC)) {
            fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
        }
        int init_rc = uv_poll_init(loop, &p->poll, fd);
        if (init_rc != 0) {
            // The timer, still running, tries again at the C client's next deadline.
            LOG_ERROR("yield: uv_poll_init failed for fd %d: %s", (int) fd, uv_strerror(init_rc));
            free(p);
            return false;
        }
        zk_io = p;
        uv_poll_start(&zk_io->poll, events, &zk_io_cb);
        poll_events = events;
        poll_state = state;
        return true;
    }

    // After a request call: the C client sends at once, and if that send fails it closes the
    // socket there and then (state ZOO_NOTCONNECTED_STATE). The watcher armed for that socket is
    // closed now, before the event loop polls again, so libuv never touches the closed descriptor.
    // Nothing reconnects from here: the C client leaves that request and those in flight queued
    // for the old connection (nonblocking_send does not clean them up), so going on with this
    // handle would match replies to the wrong requests. The owner closes the handle and resumes
    // the session on a new one (ZkConnection.moveSession does, on seeing this state).
    void afterRequest() {
        if (!is_closed && zhandle && poll_state == ZOO_CONNECTED_STATE && zoo_state(zhandle) != ZOO_CONNECTED_STATE) {
            LOG_DEBUG("afterRequest: the connection dropped during a send");
            dropPoll();
        }
    }

    static void zk_io_cb(uv_poll_t *w, int status, int revents) {
        LOG_DEBUG("zk_io_cb fired, status: %d, revents: %d", status, revents);
        ZooKeeper *zk = reinterpret_cast<PollHandle *>(w)->zk;
        if (!zk || zk->is_closed || !zk->zhandle) return;

        int events;
        if (status < 0) {
            events = ZOOKEEPER_READ | ZOOKEEPER_WRITE;
        } else {
            events = (revents & UV_READABLE ? ZOOKEEPER_READ : 0) | (revents & UV_WRITABLE ? ZOOKEEPER_WRITE : 0);
        }

        int rc;
        {
            CCall c(zk);
#ifdef HAVE_CYRUS_SASL_H
            if (zk->sasl) nzl_sasl_clear_error();
#endif
            rc = zookeeper_process(zk->zhandle, events);
        }
        if (zk->is_closed) return;
#ifdef HAVE_CYRUS_SASL_H
        if (zk->sasl && zoo_state(zk->zhandle) == ZOO_AUTH_FAILED_STATE) {
            zk->saslFailed(rc);
            return;
        }
#endif

        if (rc == ZOK) {
            zk->noResponseCounter = 0;
        } else if (rc == ZNOTHING) {
            zk->noResponseCounter++;
            LOG_WARN("yield:zookeeper_process has returned no response %d times\n", zk->noResponseCounter);
        } else {
            LOG_ERROR("yield:zookeeper_process returned an error: %d - %s\n", rc, zerror(rc));
        }

        if (zk->noResponseCounter > zk->responseCounterLimit) {
            LOG_ERROR("yield:zookeeper_process returned no response too many times: %d\n", zk->noResponseCounter);
            zk->realClose(ZOO_EXPIRED_SESSION_STATE);
            return;
        }

        zk->yield();
    }

    static void zk_timer_cb(uv_timer_t *w) {
        LOG_DEBUG("zk_timer_cb fired");
        ZooKeeper *zk = reinterpret_cast<TimerHandle *>(w)->zk;
        if (!zk || zk->is_closed) return;
        int64_t now = uv_now(zk->loop);
        int64_t timeout = zk->last_activity + zk->tv.tv_sec * 1000 + zk->tv.tv_usec / 1000.;

        // if last_activity + tv.tv_sec is older than now, we did time out
        if (timeout < now) {
            LOG_DEBUG("ping timer went off");
            zk->yield();
        } else {
            // callback was invoked, but there was some activity: re-arm the timer for
            // last_activity + the C client's delay, which is in the future.
            int64_t delay = timeout - now + 1;
            uv_timer_start(w, &zk_timer_cb, delay, delay);
            LOG_DEBUG("delaying ping timer by %ld", (long) delay);
        }
    }

    static void timer_closed(uv_handle_t *handle) {
        TimerHandle *t = reinterpret_cast<TimerHandle *>(handle);
        AddonData *d = t->data;
        ZooKeeper *zk = t->zk;
        free(t);
        // Referenced since init: from here the object may be collected.
        if (zk) zk->Unref();
        d->closing_uv_handles--;
        d->maybeFinishCleanup();
    }

#ifdef HAVE_CYRUS_SASL_H
    // SASL failed: the C client stopped in ZOO_AUTH_FAILED_STATE without telling the watcher (and
    // would do nothing more). JavaScript hears why ('sasl_failed': the code, the server's (ZAUTHFAILED,
    // ZSESSIONCLOSEDREQUIRESASLAUTH) or the SASL client's (ZSYSTEMERROR, with its words)), then the
    // handle closes as after an authentication failure.
    void saslFailed(int rc) {
        LOG_ERROR("SASL authentication failed: %d", rc);
        const char *why = nzl_sasl_last_error();
        if (jsAllowed()) {
            Napi::Env env = Env();
            Napi::HandleScope scope(env);
            Napi::Object failure = Napi::Object::New(env);
            failure.Set("code", Napi::Number::New(env, rc));
            if (why) failure.Set("detail", Napi::String::New(env, why));
            DoEmit("sasl_failed", failure);
        }
        nzl_sasl_clear_error();
        realClose(ZOO_AUTH_FAILED_STATE);
    }
#endif

    bool realInit(const char *hostPort, int session_timeout, clientid_t *client_id, const char *cert) {
        myid = *client_id;
#ifdef HAVE_CYRUS_SASL_H
        if (sasl) {
            zhandle = sasl->init(hostPort, cert, main_watcher, session_timeout, &myid, this);
        } else
#endif
#ifdef HAVE_OPENSSL_H
        // TLS: cert is "ca,cert,key[,passphrase]" (PEM file paths), as zookeeper_init_ssl parses it.
        zhandle = cert ? zookeeper_init_ssl(hostPort, cert, main_watcher, session_timeout, &myid, this, 0)
                       : zookeeper_init(hostPort, main_watcher, session_timeout, &myid, this, 0);
#else
        zhandle = zookeeper_init(hostPort, main_watcher, session_timeout, &myid, this, 0);
#endif
        if (!zhandle) {
            LOG_ERROR("zookeeper_init returned 0!");
            return false;
        }
        Ref();
        // Resolve host names when (re)connecting only: see the header.
        zoo_set_servers_resolution_delay(zhandle, -1);
        if (cert) applyTlsHostCheck(); // before the first connect (yield, below)

        zk_timer = (TimerHandle *) malloc(sizeof(TimerHandle));
        zk_timer->zk = this;
        zk_timer->data = data;
        uv_timer_init(loop, &zk_timer->timer);

        // Open: closed by the environment's cleanup hook if it ends first.
        open_next = data->open;
        open_prev = nullptr;
        if (data->open) data->open->open_prev = this;
        data->open = this;
        in_open_list = true;

        noResponseCounter = 0;

        yield();
        return true;
    }

    // ---- JavaScript methods ----

    Napi::Value Init(const Napi::CallbackInfo &info) {
        Napi::Env env = info.Env();
        JsCall js(this);
        if (info.Length() < 1) {
            Napi::Error::New(env, "Must pass ZK init object").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        if (!info[0].IsObject()) {
            Napi::Error::New(env, "Init argument must be an object").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        if (zhandle || is_closed) {
            Napi::Error::New(env, "ZK init: this handle was already initialised").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        Napi::Object arg = info[0].As<Napi::Object>();

        int32_t debug_level = toInt(arg.Get("debug_level"));
        zoo_set_debug_level(static_cast<ZooLogLevel>(debug_level));

        bool order = toBool(arg.Get("host_order_deterministic"));
        zoo_deterministic_conn_order(order); // enable deterministic order

        std::string hostPort = toUtf8(arg.Get("connect"));
        int32_t session_timeout = toInt(arg.Get("timeout"));
        if (session_timeout == 0) {
            session_timeout = 20000;
        }

        clientid_t local_client;
        memset(&local_client, 0, sizeof(local_client));
        Napi::Value v_client_id = arg.Get("client_id");
        Napi::Value v_client_password = arg.Get("client_password");
        if (env.IsExceptionPending()) return env.Undefined();
        bool id_and_password_defined = (!v_client_id.IsUndefined() && !v_client_password.IsUndefined());
        bool id_and_password_undefined = (v_client_id.IsUndefined() && v_client_password.IsUndefined());
        if (!(id_and_password_defined || id_and_password_undefined)) {
            Napi::Error::New(env, "ZK init: client id and password must either be both specified or unspecified").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        if (id_and_password_defined) {
            std::string password = toUtf8(v_client_password);
            if (password.length() != 2 * ZOOKEEPER_PASSWORD_BYTE_COUNT) {
                if (!env.IsExceptionPending()) {
                    Napi::Error::New(env, "ZK init: password does not have correct length").ThrowAsJavaScriptException();
                }
                return env.Undefined();
            }
            for (int i = 0; i < ZOOKEEPER_PASSWORD_BYTE_COUNT; ++i) {
                local_client.passwd[i] = (char) ((hexToFourBits(password[2 * i]) << 4) | hexToFourBits(password[2 * i + 1]));
            }
            std::string id = toUtf8(v_client_id);
            sscanf(id.c_str(), "%llx", (unsigned long long *) &local_client.client_id);
        }

        int32_t response_counter_limit = toInt(arg.Get("response_counter_limit"));
        if (env.IsExceptionPending()) return env.Undefined();
        if (response_counter_limit > 0) {
            responseCounterLimit = response_counter_limit;
        }

        Napi::Value v_cert = arg.Get("cert");
        if (env.IsExceptionPending()) return env.Undefined();
#ifndef HAVE_OPENSSL_H
        if (!v_cert.IsUndefined()) {
            Napi::Error::New(env, "ZK init: this addon was built without TLS support").ThrowAsJavaScriptException();
            return env.Undefined();
        }
#endif
        std::string cert = v_cert.IsUndefined() ? std::string() : toUtf8(v_cert);
        if (env.IsExceptionPending()) return env.Undefined();
        if (!readTlsHostCheck(arg)) return env.Undefined();
        Napi::Value v_sasl = arg.Get("sasl");
        if (env.IsExceptionPending()) return env.Undefined();
        if (!v_sasl.IsUndefined()) {
#ifdef HAVE_CYRUS_SASL_H
            sasl = SaslSetup::from(env, v_sasl);
            if (!sasl) return env.Undefined();
#else
            Napi::Error::New(env, "ZK init: this addon was built without SASL support").ThrowAsJavaScriptException();
            return env.Undefined();
#endif
        }
        if (!realInit(hostPort.c_str(), session_timeout, &local_client, v_cert.IsUndefined() ? nullptr : cert.c_str())) {
            // Returned, not thrown (as upstream's Nan::ErrnoException).
            int error_number = errno;
            Napi::Error error = Napi::Error::New(env, std::string(uv_err_name(-error_number)) + ", failed to init");
            error.Set("errno", Napi::Number::New(env, error_number));
            error.Set("code", Napi::String::New(env, uv_err_name(-error_number)));
            error.Set("syscall", Napi::String::New(env, "zookeeper_init"));
            return error.Value();
        }
        return info.This();
    }

    static void main_watcher(zhandle_t *zzh, int type, int state, const char *path, void *context) {
        LOG_DEBUG("main watcher event: type=%d, state=%d, path=%s", type, state, (path ? path : "null"));
        ZooKeeper *zk = static_cast<ZooKeeper *>(context);

        if (type == ZOO_SESSION_EVENT) {
            if (state == ZOO_CONNECTED_STATE) {
                zk->myid = *(zoo_client_id(zzh));
                zk->DoEmitPath("connect", path);
            } else if (state == ZOO_CONNECTING_STATE) {
                zk->DoEmitPath("connecting", path);
            } else if (state == ZOO_AUTH_FAILED_STATE) {
                LOG_ERROR("Authentication failure. Shutting down...\n");
                zk->realClose(ZOO_AUTH_FAILED_STATE);
            } else if (state == ZOO_EXPIRED_SESSION_STATE) {
                LOG_ERROR("Session expired. Shutting down...\n");
                zk->realClose(ZOO_EXPIRED_SESSION_STATE);
            }
        } else if (type == ZOO_CREATED_EVENT) {
            zk->DoEmitPath("created", path);
        } else if (type == ZOO_DELETED_EVENT) {
            zk->DoEmitPath("deleted", path);
        } else if (type == ZOO_CHANGED_EVENT) {
            zk->DoEmitPath("changed", path);
        } else if (type == ZOO_CHILD_EVENT) {
            zk->DoEmitPath("child", path);
        } else if (type == ZOO_NOTWATCHING_EVENT) {
            zk->DoEmitPath("notwatching", path);
        } else {
            LOG_WARN("Unknown watcher event type %d", type);
        }
    }

    void DoEmitPath(const char *event_name, const char *path) {
        if (!jsAllowed()) return;
        Napi::Env env = Env();
        Napi::HandleScope scope(env);
        Napi::Value value = path != nullptr ? Napi::String::New(env, path) : env.Undefined();
        LOG_DEBUG("calling Emit(%s, path='%s')", event_name, path ? path : "null");
        DoEmit(event_name, value);
    }

    // this.emit(event, this, data): the TypeScript side sets `emit` on the instance.
    void DoEmit(const char *event_name, Napi::Value value) {
        Napi::Env env = Env();
        Napi::HandleScope scope(env);
        Napi::Object self = Value();
        Napi::Value emit = self.Get("emit");
        if (env.IsExceptionPending()) {
            callJsFailed();
            return;
        }
        if (!emit.IsFunction()) return;
        callJs(emit.As<Napi::Function>(), self, {Napi::String::New(env, event_name), self, value}, "node-zk:DoEmit");
    }

    // An exception pending outside callJs (a getter threw): handled as callJs would.
    void callJsFailed() {
        Napi::Env env = Env();
        if (!env.IsExceptionPending()) return;
        Napi::Error error = env.GetAndClearPendingException();
        if (js_depth > 0 && deferred_error.IsEmpty()) {
            deferred_error = Napi::Reference<Napi::Value>::New(error.Value(), 1);
        } else {
            napi_fatal_exception(env, error.Value());
        }
    }

    static Napi::String idAsString(Napi::Env env, int64_t id) {
        char idbuff[128] = {0};
        snprintf(idbuff, sizeof(idbuff), "%llx", (unsigned long long) id);
        return Napi::String::New(env, idbuff);
    }

    static Napi::String PasswordToHexString(Napi::Env env, const char *p) {
        char buff[ZOOKEEPER_PASSWORD_BYTE_COUNT * 2 + 1], *b = buff;
        for (int i = 0; i < ZOOKEEPER_PASSWORD_BYTE_COUNT; ++i) {
            unsigned char c = (unsigned char) p[i];
            b[0] = fourBitsToHex((c & 0xf0) >> 4);
            b[1] = fourBitsToHex(c & 0x0f);
            b += 2;
        }
        buff[ZOOKEEPER_PASSWORD_BYTE_COUNT * 2] = '\0';
        return Napi::String::New(env, buff);
    }

    // ---- TLS host names (config tls_names, tls_any_name; see native/c-client.cjs, patchHostCheck) ----

    struct TlsName {
        std::string address;
        int port;
        std::string name;
    };
    std::vector<TlsName> tls_names; // the host name each address of `connect` was looked up from
    bool tls_any_name = false;      // true: the certificate's names are not checked

    // Appends the entries of `names` ([{ address, port, name }]) to tls_names; false with a JS exception pending.
    bool readTlsNames(Napi::Value names) {
        Napi::Env env = Env();
        if (names.IsUndefined()) return true;
        if (!names.IsArray()) {
            Napi::TypeError::New(env, "tls_names must be an array of { address, port, name }").ThrowAsJavaScriptException();
            return false;
        }
        Napi::Array list = names.As<Napi::Array>();
        for (uint32_t i = 0; i < list.Length(); i++) {
            Napi::Value entry = list.Get(i);
            if (env.IsExceptionPending()) return false;
            if (!entry.IsObject()) {
                Napi::TypeError::New(env, "tls_names must be an array of { address, port, name }").ThrowAsJavaScriptException();
                return false;
            }
            Napi::Object o = entry.As<Napi::Object>();
            TlsName n{toUtf8(o.Get("address")), toInt(o.Get("port")), toUtf8(o.Get("name"))};
            if (env.IsExceptionPending()) return false;
            tls_names.push_back(n);
        }
        return true;
    }

    // Reads tls_names and tls_any_name of the init config; false with a JS exception pending.
    bool readTlsHostCheck(Napi::Object arg) {
        Napi::Env env = Env();
        Napi::Value names = arg.Get("tls_names");
        if (env.IsExceptionPending() || !readTlsNames(names)) return false;
        tls_any_name = toBool(arg.Get("tls_any_name"));
        return !env.IsExceptionPending();
    }

    // Gives the C client the names read (and forgets them here).
    void applyTlsHostCheck() {
#ifdef HAVE_OPENSSL_H
        zoo_nzl_tls_any_name(zhandle, tls_any_name ? 1 : 0);
        // An entry the C client refuses is left out: that address is then expected to be named by
        // its IP, which fails closed (its handshake is refused), never open.
        for (const TlsName &n : tls_names) {
            if (zoo_nzl_tls_expect(zhandle, n.address.c_str(), n.port, n.name.c_str()) != ZOK) {
                LOG_ERROR("TLS: host name %s for %s:%d refused", n.name.c_str(), n.address.c_str(), n.port);
            }
        }
#endif
        tls_names.clear();
    }

    // tls_names(names): more names, for the addresses of a new server list (before set_servers).
    Napi::Value TlsNames(const Napi::CallbackInfo &info) {
        Napi::Env env = info.Env();
        JsCall js(this);
        if (!readTlsNames(info.Length() > 0 ? info[0] : env.Undefined())) return env.Undefined();
        if (zhandle) applyTlsHostCheck();
        return env.Undefined();
    }

    // ---- conversions (as upstream's converters.hpp: JavaScript coercions) ----

    std::string toUtf8(Napi::Value v) {
        Napi::Env env = Env();
        if (env.IsExceptionPending() || v.IsEmpty()) return std::string();
        Napi::String s = v.ToString();
        if (env.IsExceptionPending()) return std::string();
        return s.Utf8Value();
    }
    int32_t toInt(Napi::Value v) {
        Napi::Env env = Env();
        if (env.IsExceptionPending() || v.IsEmpty()) return 0;
        Napi::Number n = v.ToNumber();
        if (env.IsExceptionPending()) return 0;
        return n.Int32Value();
    }
    uint32_t toUint(Napi::Value v) {
        Napi::Env env = Env();
        if (env.IsExceptionPending() || v.IsEmpty()) return 0;
        Napi::Number n = v.ToNumber();
        if (env.IsExceptionPending()) return 0;
        return n.Uint32Value();
    }
    int64_t toInt64(Napi::Value v) {
        Napi::Env env = Env();
        if (env.IsExceptionPending() || v.IsEmpty()) return 0;
        Napi::Number n = v.ToNumber();
        if (env.IsExceptionPending()) return 0;
        return static_cast<int64_t>(n.DoubleValue());
    }
    bool toBool(Napi::Value v) {
        if (Env().IsExceptionPending() || v.IsEmpty()) return false;
        return v.ToBoolean().Value();
    }

    // ---- requests ----

    void track(Request *r) {
        r->prev = nullptr;
        r->next = requests;
        if (requests) requests->prev = r;
        requests = r;
    }
    void untrack(Request *r) {
        if (r->prev) r->prev->next = r->next; else if (requests == r) requests = r->next;
        if (r->next) r->next->prev = r->prev;
        r->prev = r->next = nullptr;
    }
    void release(Request *r) {
        untrack(r);
        delete r;
    }

    // Frees whatever the C client may forget without calling, once the handle is closed and no call
    // into the C client is under way (one could still deliver to these).
    void sweep() {
        sweep_pending = false;
        while (requests) release(requests);
    }

    // A request for `cb` (the argument at `index`, which must be a function), tracked.
    Request *newRequest(const Napi::CallbackInfo &info, size_t index) {
        Request *r = new Request(this);
        r->cb = Napi::Persistent(info[index].As<Napi::Function>());
        track(r);
        return r;
    }

    // After the request call: a request the C client refused has no completion coming.
    Napi::Value finishCall(Napi::Env env, Request *r, int ret) {
        afterRequest();
        // ZMARSHALLINGERROR may come after the completion was queued (out of memory): kept then.
        if (ret != ZOK && ret != ZMARSHALLINGERROR) release(r);
        return Napi::Number::New(env, ret);
    }

    bool checkArgs(const Napi::CallbackInfo &info, size_t n, bool watcher, const char *text) {
        Napi::Env env = info.Env();
        if (info.Length() < n) {
            Napi::Error::New(env, text).ThrowAsJavaScriptException();
            return false;
        }
        if (!info[n - 1].IsFunction() || (watcher && !info[n - 2].IsFunction())) {
            Napi::TypeError::New(env, "the callback must be a function").ThrowAsJavaScriptException();
            return false;
        }
        return true;
    }

    // Calls the request's completion callback with (rc, zerror(rc), ...rest), untracked first (the
    // callback may close the handle), and frees the request unless it holds a watch that is set.
    static void complete(Request *r, int rc, std::vector<napi_value> rest, bool keep_for_watch) {
        ZooKeeper *zk = r->zk;
        zk->untrack(r);
        if (zk->jsAllowed() && !r->cb.IsEmpty()) {
            Napi::Env env = zk->Env();
            Napi::Function fn = r->cb.Value();
            std::vector<napi_value> args;
            args.reserve(2 + rest.size());
            args.push_back(Napi::Number::New(env, rc));
            args.push_back(Napi::String::New(env, zerror(rc)));
            for (napi_value v : rest) args.push_back(v);
            zk->callJs(fn, env.Global(), args, "node-zk:CALLBACK_EPILOG");
        }
        r->cb.Reset();
        if (keep_for_watch) {
            // The C client holds the watch: the record stays until the watch fires, is removed, or
            // the handle closes.
            r->watch_active = true;
            zk->track(r);
        } else {
            delete r;
        }
    }

    // Whether the C client set the watch of an aw_* request answered with rc (zk_hashtable.c's
    // result checkers: exists sets one on a missing node too).
    static bool watchSet(Request *r, int rc) {
        if (r->watch_kind == WATCH_NONE) return false;
        return rc == ZOK || (r->watch_kind == WATCH_EXISTS && rc == ZNONODE);
    }

#define COMPLETION_PROLOG() \
        Request *r = (Request *) const_cast<void *>(data); \
        ZooKeeper *zk = r->zk; \
        if (!zk->jsAllowed()) { complete(r, rc, {}, watchSet(r, rc)); return; } \
        Napi::Env env = zk->Env(); \
        Napi::HandleScope scope(env)

    static void string_completion(int rc, const char *value, const void *data) {
        if (value == 0) {
            value = "null";
        }
        LOG_DEBUG("rc=%d, rc_string=%s, path=%s", rc, zerror(rc), value);
        COMPLETION_PROLOG();
        complete(r, rc, {Napi::String::New(env, value)}, false);
    }

    static void void_completion(int rc, const void *data) {
        LOG_DEBUG("rc=%d, rc_string=%s", rc, zerror(rc));
        COMPLETION_PROLOG();
        complete(r, rc, {}, false);
    }

    // a_remove_data_watches: on success the C client dropped every data watch on the path, so the
    // aw_* watch records it held there are freed.
    static void remove_watches_completion(int rc, const void *data) {
        Request *r = (Request *) const_cast<void *>(data);
        ZooKeeper *zk = r->zk;
        if (rc == ZOK) {
            Request *next;
            for (Request *w = zk->requests; w; w = next) {
                next = w->next;
                if (w->watch_active && (w->watch_kind == WATCH_DATA || w->watch_kind == WATCH_EXISTS) && w->path == r->path) {
                    zk->release(w);
                }
            }
        }
        void_completion(rc, data);
    }

    Napi::Value createStatObject(Napi::Env env, const struct Stat *stat) {
        Napi::Object o = Napi::Object::New(env);
        napi_property_attributes ro = static_cast<napi_property_attributes>(napi_enumerable | napi_configurable);
        o.DefineProperties({
            Napi::PropertyDescriptor::Value("czxid", Napi::Number::New(env, (double) stat->czxid), ro),
            Napi::PropertyDescriptor::Value("mzxid", Napi::Number::New(env, (double) stat->mzxid), ro),
            Napi::PropertyDescriptor::Value("pzxid", Napi::Number::New(env, (double) stat->pzxid), ro),
            Napi::PropertyDescriptor::Value("dataLength", Napi::Number::New(env, stat->dataLength), ro),
            Napi::PropertyDescriptor::Value("numChildren", Napi::Number::New(env, stat->numChildren), ro),
            Napi::PropertyDescriptor::Value("version", Napi::Number::New(env, stat->version), ro),
            Napi::PropertyDescriptor::Value("cversion", Napi::Number::New(env, stat->cversion), ro),
            Napi::PropertyDescriptor::Value("aversion", Napi::Number::New(env, stat->aversion), ro),
            Napi::PropertyDescriptor::Value("ctime", Napi::Date::New(env, (double) stat->ctime), ro),
            Napi::PropertyDescriptor::Value("mtime", Napi::Date::New(env, (double) stat->mtime), ro),
            Napi::PropertyDescriptor::Value("ephemeralOwner", idAsString(env, stat->ephemeralOwner), ro),
            Napi::PropertyDescriptor::Value("createdInThisSession", Napi::Boolean::New(env, myid.client_id == stat->ephemeralOwner), ro),
        });
        return o;
    }

    static void stat_completion(int rc, const struct Stat *stat, const void *data) {
        LOG_DEBUG("rc=%d, rc_string=%s", rc, zerror(rc));
        COMPLETION_PROLOG();
        Napi::Value s = rc == ZOK ? zk->createStatObject(env, stat) : env.Null();
        complete(r, rc, {s}, watchSet(r, rc));
    }

    static void data_completion(int rc, const char *value, int value_len, const struct Stat *stat, const void *data) {
        LOG_DEBUG("rc=%d, rc_string=%s", rc, zerror(rc));
        COMPLETION_PROLOG();
        Napi::Value s = stat != 0 ? zk->createStatObject(env, stat) : env.Null();
        Napi::Value buffer = value != 0 ? Napi::Value(Napi::Buffer<char>::Copy(env, value, value_len)) : env.Null();
        complete(r, rc, {s, buffer}, watchSet(r, rc));
    }

    static Napi::Value stringsArray(Napi::Env env, const struct String_vector *strings) {
        if (strings == NULL) return env.Null();
        Napi::Array ar = Napi::Array::New(env, (size_t) strings->count);
        for (uint32_t i = 0; i < (uint32_t) strings->count; ++i) {
            ar.Set(i, Napi::String::New(env, strings->data[i]));
        }
        return ar;
    }

    static void strings_completion(int rc, const struct String_vector *strings, const void *data) {
        LOG_DEBUG("rc=%d, rc_string=%s", rc, zerror(rc));
        COMPLETION_PROLOG();
        complete(r, rc, {stringsArray(env, strings)}, watchSet(r, rc));
    }

    static void strings_stat_completion(int rc, const struct String_vector *strings, const struct Stat *stat, const void *data) {
        LOG_DEBUG("rc=%d, rc_string=%s", rc, zerror(rc));
        COMPLETION_PROLOG();
        Napi::Value list = stringsArray(env, strings);
        Napi::Value s = stat != 0 ? zk->createStatObject(env, stat) : env.Null();
        complete(r, rc, {list, s}, watchSet(r, rc));
    }

    Napi::Value createAclObject(Napi::Env env, struct ACL_vector *aclv) {
        Napi::Array arr = Napi::Array::New(env, aclv->count);
        napi_property_attributes ro = static_cast<napi_property_attributes>(napi_enumerable | napi_configurable);
        for (int i = 0; i < aclv->count; i++) {
            struct ACL *acl = &aclv->data[i];
            Napi::Object obj = Napi::Object::New(env);
            obj.DefineProperties({
                Napi::PropertyDescriptor::Value("perms", Napi::Number::New(env, acl->perms), ro),
                Napi::PropertyDescriptor::Value("scheme", Napi::String::New(env, acl->id.scheme), ro),
                Napi::PropertyDescriptor::Value("auth", Napi::String::New(env, acl->id.id), ro),
            });
            arr.Set((uint32_t) i, obj);
        }
        return arr;
    }

    static void acl_completion(int rc, struct ACL_vector *acl, struct Stat *stat, const void *data) {
        LOG_DEBUG("rc=%d, rc_string=%s", rc, zerror(rc));
        Request *r = (Request *) const_cast<void *>(data);
        ZooKeeper *zk = r->zk;
        if (!zk->jsAllowed()) {
            if (acl) deallocate_ACL_vector(acl);
            complete(r, rc, {}, false);
            return;
        }
        Napi::Env env = zk->Env();
        Napi::HandleScope scope(env);
        Napi::Value a = acl != NULL ? zk->createAclObject(env, acl) : env.Null();
        Napi::Value s = stat != NULL ? zk->createStatObject(env, stat) : env.Null();
        // As upstream (the C client's own deallocation after this finds it emptied); NULL when the
        // request failed, which upstream dereferenced.
        if (acl) deallocate_ACL_vector(acl);
        complete(r, rc, {a, s}, false);
    }

    static void multi_completion(int rc, const void *data) {
        LOG_DEBUG("multi rc=%d, rc_string=%s", rc, zerror(rc));
        COMPLETION_PROLOG();
        int count = (int) r->results.size();
        Napi::Array results = Napi::Array::New(env, count);
        for (int i = 0; i < count; i++) {
            Napi::Object o = Napi::Object::New(env);
            o.Set("rc", Napi::Number::New(env, r->results[i].err));
            if (r->results[i].err == ZOK && r->results[i].value != NULL && r->results[i].valuelen > 0) {
                o.Set("path", Napi::String::New(env, r->results[i].value));
            }
            results.Set((uint32_t) i, o);
        }
        complete(r, rc, {results}, false);
    }

    // An aw_* watch: (type, state, path, undefined). Over (and freed) once it fired for its node.
    static void watcher_fn(zhandle_t *zh, int type, int state, const char *path, void *watcherCtx) {
        if (zoo_state(zh) == ZOO_EXPIRED_SESSION_STATE) { return; }
        Request *r = (Request *) watcherCtx;
        ZooKeeper *zk = r->zk;
        bool over = type != ZOO_SESSION_EVENT;
        if (over) zk->untrack(r);
        if (zk->jsAllowed() && !r->watcher.IsEmpty()) {
            Napi::Env env = zk->Env();
            Napi::HandleScope scope(env);
            Napi::Function fn = r->watcher.Value();
            zk->callJs(fn, env.Global(), {Napi::Number::New(env, type), Napi::Number::New(env, state),
                       Napi::String::New(env, path ? path : ""), env.Undefined()}, "node-zk:WATCHER_CALLBACK_EPILOG");
        }
        if (over) delete r;
    }

    // ---- request methods ----

#define A_METHOD_PROLOG(nargs) \
        Napi::Env env = info.Env(); \
        JsCall js(this); \
        if (!checkArgs(info, nargs, false, "expected " #nargs " arguments")) return env.Undefined();

#define AW_METHOD_PROLOG(nargs) \
        Napi::Env env = info.Env(); \
        JsCall js(this); \
        if (!checkArgs(info, nargs, true, "expected at least " #nargs " arguments")) return env.Undefined();

#define ARGS_OK() if (env.IsExceptionPending()) return env.Undefined()

    // Request data: a Buffer's bytes, or the value as a string (as upstream).
    struct Bytes {
        std::string text;
        const char *ptr = nullptr;
        size_t len = 0;
    };
    void toBytes(Napi::Value v, Bytes &b) {
        if (v.IsBuffer()) {
            Napi::Buffer<char> buffer = v.As<Napi::Buffer<char>>();
            b.ptr = buffer.Data();
            b.len = buffer.Length();
        } else {
            b.text = toUtf8(v);
            b.ptr = b.text.data();
            b.len = b.text.size();
        }
    }

    Napi::Value ACreate(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(4);
        std::string path = toUtf8(info[0]);
        Bytes bytes;
        toBytes(info[1], bytes);
        uint32_t flags = toUint(info[2]);
        ARGS_OK();
        Request *r = newRequest(info, 3);
        CCall c(this);
        int ret = zhandle ? zoo_acreate(zhandle, path.c_str(), bytes.ptr, (int) bytes.len, &ZOO_OPEN_ACL_UNSAFE, flags, string_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    // a_create_acl(path, data, flags, acl, cb): a_create with the node's ACL in the create request
    // ([{ scheme, auth, perm }], as a_set_acl takes it), so that it is never open, not even for the
    // instant before a setAcl. zoo_acreate serializes the ACL at once: it is freed right after.
    Napi::Value ACreateAcl(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(5);
        std::string path = toUtf8(info[0]);
        uint32_t flags = toUint(info[2]);
        ARGS_OK();
        if (!info[3].IsArray() || info[3].As<Napi::Array>().Length() == 0) {
            Napi::Error::New(env, "a_create_acl: the ACL must be a non-empty array").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        struct ACL_vector *aclv = createAclVector(info[3].As<Napi::Array>());
        Bytes bytes;
        toBytes(info[1], bytes);
        if (!aclv || env.IsExceptionPending()) {
            if (aclv) { deallocate_ACL_vector(aclv); free(aclv); }
            return env.Undefined();
        }
        Request *r = newRequest(info, 4);
        CCall c(this);
        int ret = zhandle ? zoo_acreate(zhandle, path.c_str(), bytes.ptr, (int) bytes.len, aclv, flags, string_completion, r) : ZINVALIDSTATE;
        Napi::Value result = finishCall(env, r, ret);
        deallocate_ACL_vector(aclv);
        free(aclv);
        return result;
    }

    Napi::Value ACreateTtl(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(5);
        std::string path = toUtf8(info[0]);
        Bytes bytes;
        toBytes(info[1], bytes);
        uint32_t flags = toUint(info[2]);
        int32_t ttl = toInt(info[3]);
        ARGS_OK();
        Request *r = newRequest(info, 4);
        CCall c(this);
        int ret = zhandle ? zoo_acreate_ttl(zhandle, path.c_str(), bytes.ptr, (int) bytes.len, &ZOO_OPEN_ACL_UNSAFE, flags, ttl, string_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value ADelete(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        uint32_t version = toUint(info[1]);
        ARGS_OK();
        Request *r = newRequest(info, 2);
        CCall c(this);
        int ret = zhandle ? zoo_adelete(zhandle, path.c_str(), version, &void_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AExists(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        bool watch = toBool(info[1]);
        ARGS_OK();
        Request *r = newRequest(info, 2);
        CCall c(this);
        int ret = zhandle ? zoo_aexists(zhandle, path.c_str(), watch, &stat_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    // The watch function of an aw_* request: kept in the request's record.
    Request *newWatchRequest(const Napi::CallbackInfo &info, size_t nargs, WatchKind kind, const std::string &path) {
        Request *r = newRequest(info, nargs - 1);
        r->watcher = Napi::Persistent(info[nargs - 2].As<Napi::Function>());
        r->watch_kind = kind;
        if (kind == WATCH_DATA || kind == WATCH_EXISTS) r->path = path;
        return r;
    }

    Napi::Value AWExists(const Napi::CallbackInfo &info) {
        AW_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        ARGS_OK();
        Request *r = newWatchRequest(info, 3, WATCH_EXISTS, path);
        CCall c(this);
        int ret = zhandle ? zoo_awexists(zhandle, path.c_str(), &watcher_fn, r, &stat_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AGet(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        bool watch = toBool(info[1]);
        ARGS_OK();
        Request *r = newRequest(info, 2);
        CCall c(this);
        int ret = zhandle ? zoo_aget(zhandle, path.c_str(), watch, &data_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AWGet(const Napi::CallbackInfo &info) {
        AW_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        ARGS_OK();
        Request *r = newWatchRequest(info, 3, WATCH_DATA, path);
        CCall c(this);
        int ret = zhandle ? zoo_awget(zhandle, path.c_str(), &watcher_fn, r, &data_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value ASet(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(4);
        std::string path = toUtf8(info[0]);
        Bytes bytes;
        toBytes(info[1], bytes);
        uint32_t version = toUint(info[2]);
        ARGS_OK();
        Request *r = newRequest(info, 3);
        CCall c(this);
        int ret = zhandle ? zoo_aset(zhandle, path.c_str(), bytes.ptr, (int) bytes.len, version, &stat_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AGetChildren(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        bool watch = toBool(info[1]);
        ARGS_OK();
        Request *r = newRequest(info, 2);
        CCall c(this);
        int ret = zhandle ? zoo_aget_children(zhandle, path.c_str(), watch, &strings_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AWGetChildren(const Napi::CallbackInfo &info) {
        AW_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        ARGS_OK();
        Request *r = newWatchRequest(info, 3, WATCH_CHILD, path);
        CCall c(this);
        int ret = zhandle ? zoo_awget_children(zhandle, path.c_str(), &watcher_fn, r, &strings_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AGetChildren2(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        bool watch = toBool(info[1]);
        ARGS_OK();
        Request *r = newRequest(info, 2);
        CCall c(this);
        int ret = zhandle ? zoo_aget_children2(zhandle, path.c_str(), watch, &strings_stat_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AWGetChildren2(const Napi::CallbackInfo &info) {
        AW_METHOD_PROLOG(3);
        std::string path = toUtf8(info[0]);
        ARGS_OK();
        Request *r = newWatchRequest(info, 3, WATCH_CHILD, path);
        CCall c(this);
        int ret = zhandle ? zoo_awget_children2(zhandle, path.c_str(), &watcher_fn, r, &strings_stat_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AGetAcl(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(2);
        std::string path = toUtf8(info[0]);
        ARGS_OK();
        Request *r = newRequest(info, 1);
        CCall c(this);
        int ret = zhandle ? zoo_aget_acl(zhandle, path.c_str(), &acl_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    // [{ scheme, auth, perm }] as the C client's ACL_vector (NULL, with an exception pending, when
    // reading the array threw).
    struct ACL_vector *createAclVector(Napi::Array arr) {
        Napi::Env env = Env();
        struct ACL_vector *aclv = (struct ACL_vector *) malloc(sizeof(struct ACL_vector));
        aclv->count = arr.Length();
        aclv->data = (struct ACL *) calloc(aclv->count, sizeof(struct ACL));
        for (int i = 0, l = aclv->count; i < l; i++) {
            Napi::Value item = arr.Get((uint32_t) i);
            if (env.IsExceptionPending()) break;
            if (!item.IsObject()) {
                Napi::TypeError::New(env, "an ACL entry must be an object").ThrowAsJavaScriptException();
                break;
            }
            Napi::Object obj = item.As<Napi::Object>();
            std::string scheme = toUtf8(obj.Get("scheme"));
            std::string auth = toUtf8(obj.Get("auth"));
            uint32_t perms = toUint(obj.Get("perm"));
            if (env.IsExceptionPending()) break;
            struct ACL *acl = &aclv->data[i];
            acl->id.scheme = strdup(scheme.c_str());
            acl->id.id = strdup(auth.c_str());
            acl->perms = perms;
        }
        if (env.IsExceptionPending()) {
            // Entries not reached are zeroed (calloc): deallocate_ACL_vector frees NULL ids safely.
            deallocate_ACL_vector(aclv);
            free(aclv);
            return NULL;
        }
        return aclv;
    }

    Napi::Value ASetAcl(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(4);
        std::string path = toUtf8(info[0]);
        uint32_t version = toUint(info[1]);
        ARGS_OK();
        if (!info[2].IsArray()) {
            Napi::TypeError::New(env, "a_set_acl: the ACL must be an array").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        struct ACL_vector *aclv = createAclVector(info[2].As<Napi::Array>());
        if (!aclv) return env.Undefined();
        Request *r = newRequest(info, 3);
        r->acl = aclv;
        CCall c(this);
        int ret = zhandle ? zoo_aset_acl(zhandle, path.c_str(), version, aclv, void_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value ASync(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(2);
        std::string path = toUtf8(info[0]);
        ARGS_OK();
        Request *r = newRequest(info, 1);
        CCall c(this);
        int ret = zhandle ? zoo_async(zhandle, path.c_str(), &string_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AGetConfig(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(2);
        bool watch = toBool(info[0]);
        ARGS_OK();
        Request *r = newRequest(info, 1);
        CCall c(this);
        int ret = zhandle ? zoo_agetconfig(zhandle, watch, &data_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value AWGetConfig(const Napi::CallbackInfo &info) {
        AW_METHOD_PROLOG(2);
        Request *r = newWatchRequest(info, 2, WATCH_CONFIG, std::string());
        CCall c(this);
        int ret = zhandle ? zoo_awgetconfig(zhandle, &watcher_fn, r, &data_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    Napi::Value SetServers(const Napi::CallbackInfo &info) {
        Napi::Env env = info.Env();
        JsCall js(this);
        if (info.Length() < 1) {
            Napi::Error::New(env, "expected at least 1 arguments").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        std::string servers = toUtf8(info[0]);
        ARGS_OK();
        CCall c(this);
        int ret = zhandle ? zoo_set_servers(zhandle, servers.c_str()) : ZINVALIDSTATE;
        afterRequest();
        return Napi::Number::New(env, ret);
    }

    Napi::Value AReconfig(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(5);
        std::string joining = toUtf8(info[0]);
        std::string leaving = toUtf8(info[1]);
        std::string members = toUtf8(info[2]);
        int64_t version = toInt64(info[3]);
        ARGS_OK();
        Request *r = newRequest(info, 4);
        CCall c(this);
        int ret = zhandle ? zoo_areconfig(zhandle,
                                          info[0].IsNull() || info[0].IsUndefined() ? NULL : joining.c_str(),
                                          info[1].IsNull() || info[1].IsUndefined() ? NULL : leaving.c_str(),
                                          info[2].IsNull() || info[2].IsUndefined() ? NULL : members.c_str(),
                                          version, &data_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    // add_auth(scheme, auth, cb): the C client calls cb once, when the server answers, or never (the
    // handle closed first): then the close frees it.
    Napi::Value AddAuth(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(3);
        std::string scheme = toUtf8(info[0]);
        std::string auth = toUtf8(info[1]);
        ARGS_OK();
        Request *r = newRequest(info, 2);
        CCall c(this);
        int ret = zhandle ? zoo_add_auth(zhandle, scheme.c_str(), auth.c_str(), (int) auth.length(), void_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    // a_remove_data_watches(path, cb): removes this session's data watches on `path` from the server
    // (zoo_aremove_all_watches, ZWATCHTYPE_DATA), and the C client's record of them once it answers.
    // cb(rc, message): ZNOWATCHER (-121), at once or from the server, when none is set (it fired).
    Napi::Value ARemoveDataWatches(const Napi::CallbackInfo &info) {
        A_METHOD_PROLOG(2);
        std::string path = toUtf8(info[0]);
        ARGS_OK();
        Request *r = newRequest(info, 1);
        r->path = path;
        CCall c(this);
        // zoo_aremove_all_watches declares its completion as void_completion_t *, but stores and
        // calls what it is given as the function itself (add_completion_deregistration casts it).
        int ret = zhandle ? zoo_aremove_all_watches(zhandle, path.c_str(), ZWATCHTYPE_DATA, 0, (void_completion_t *) remove_watches_completion, r) : ZINVALIDSTATE;
        Napi::Value result = finishCall(env, r, ret);
        if (ret == ZOK && zhandle) {
            // The removal above deregisters, on its answer, the watcher NULL only, which never
            // matches the default watcher a_get(path, true) registered under: the C client would
            // keep that record (memory, and a watch it sets again on every reconnect). Forgotten
            // here, locally (no request); an event crossing the removal then reaches nobody, and
            // nobody waits for it.
            zoo_aremove_watches(zhandle, path.c_str(), ZWATCHTYPE_DATA, main_watcher, this, 1, NULL, NULL);
        }
        return result;
    }

    // a_multi(ops, cb): one transaction (zoo_amulti). Each op is { type, path, data?, version?,
    // flags?, acl? } with type one of ZOO_CREATE_OP (1), ZOO_DELETE_OP (2), ZOO_SETDATA_OP (5) or
    // ZOO_CHECK_OP (13). cb(rc, message, [{ rc, path? }]): rc is the first failed operation's code
    // (ZOK when all applied); path is a created node's. A create takes `acl` as a_create_acl does
    // ([{ scheme, auth, perm }], not empty), else the open ACL.
    Napi::Value AMulti(const Napi::CallbackInfo &info) {
        Napi::Env env = info.Env();
        JsCall js(this);
        if (info.Length() < 2) {
            Napi::Error::New(env, "expected 2 arguments").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        if (!info[0].IsArray()) {
            Napi::Error::New(env, "a_multi: the operations must be an array").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        if (!info[1].IsFunction()) {
            Napi::Error::New(env, "a_multi: the callback must be a function").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        Napi::Array list = info[0].As<Napi::Array>();
        int count = (int) list.Length();
        if (!(count > 0 && count <= 1000)) {
            Napi::Error::New(env, "a_multi: between 1 and 1000 operations").ThrowAsJavaScriptException();
            return env.Undefined();
        }

        // The paths and data are copied by zoo_amulti as it serializes the request, so these only
        // need to outlive the call; the results and created paths are written at the completion.
        std::vector<std::string> paths(count);
        std::vector<std::string> datas(count);
        std::vector<zoo_op_t> ops(count);
        std::vector<zoo_op_result_t> results(count);
        std::vector<char> created(count * MULTI_PATH_MAX);
        memset(results.data(), 0, sizeof(zoo_op_result_t) * count);
        // The creates' ACLs, serialized by zoo_amulti too: freed when this call returns.
        struct AclVectors {
            std::vector<struct ACL_vector *> list;
            ~AclVectors() {
                for (struct ACL_vector *aclv : list) { deallocate_ACL_vector(aclv); free(aclv); }
            }
        } acls;

        for (int i = 0; i < count; i++) {
            Napi::Value item = list.Get((uint32_t) i);
            ARGS_OK();
            if (!item.IsObject()) {
                Napi::Error::New(env, "a_multi: each operation must be an object").ThrowAsJavaScriptException();
                return env.Undefined();
            }
            Napi::Object op = item.As<Napi::Object>();
            int type = toInt(op.Get("type"));
            paths[i] = toUtf8(op.Get("path"));
            ARGS_OK();
            Napi::Value version_value = op.Get("version");
            ARGS_OK();
            int version = version_value.IsNumber() ? toInt(version_value) : -1;
            Napi::Value value = op.Get("data");
            ARGS_OK();
            if (value.IsBuffer()) {
                Napi::Buffer<char> buffer = value.As<Napi::Buffer<char>>();
                datas[i].assign(buffer.Data(), buffer.Length());
            } else if (value.IsString()) {
                datas[i] = value.As<Napi::String>().Utf8Value();
            }
            switch (type) {
                case ZOO_CREATE_OP: {
                    int flags = (int) toUint(op.Get("flags"));
                    ARGS_OK();
                    Napi::Value acl_value = op.Get("acl");
                    ARGS_OK();
                    struct ACL_vector *aclv = &ZOO_OPEN_ACL_UNSAFE;
                    if (!acl_value.IsUndefined()) {
                        if (!acl_value.IsArray() || acl_value.As<Napi::Array>().Length() == 0) {
                            Napi::Error::New(env, "a_multi: a create's ACL must be a non-empty array").ThrowAsJavaScriptException();
                            return env.Undefined();
                        }
                        aclv = createAclVector(acl_value.As<Napi::Array>());
                        if (!aclv) return env.Undefined();
                        acls.list.push_back(aclv);
                    }
                    zoo_create_op_init(&ops[i], paths[i].c_str(), datas[i].data(), (int) datas[i].size(), aclv,
                                       flags, NULL, MULTI_PATH_MAX);
                    break;
                }
                case ZOO_DELETE_OP:
                    zoo_delete_op_init(&ops[i], paths[i].c_str(), version);
                    break;
                case ZOO_SETDATA_OP:
                    // No Stat wanted: the C client skips a NULL one.
                    zoo_set_op_init(&ops[i], paths[i].c_str(), datas[i].data(), (int) datas[i].size(), version, NULL);
                    break;
                case ZOO_CHECK_OP:
                    zoo_check_op_init(&ops[i], paths[i].c_str(), version);
                    break;
                default:
                    Napi::Error::New(env, "a_multi: an operation's type must be create (1), delete (2), setData (5) or check (13)").ThrowAsJavaScriptException();
                    return env.Undefined();
            }
        }

        Request *r = newRequest(info, 1);
        r->results.swap(results);
        r->created_paths.swap(created);
        for (int i = 0; i < count; i++) {
            if (ops[i].type == ZOO_CREATE_OP) {
                ops[i].create_op.buf = r->created_paths.data() + (size_t) i * MULTI_PATH_MAX;
            }
        }
        CCall c(this);
        int ret = zhandle ? zoo_amulti(zhandle, count, ops.data(), r->results.data(), &multi_completion, r) : ZINVALIDSTATE;
        return finishCall(env, r, ret);
    }

    // ping_answered_age(): how long ago, in ms (fractional), the most recent ping the server answered
    // on the current connection was sent, measured on CLOCK_MONOTONIC (the clock of uv_hrtime and so
    // of performance.now()) at this call; -1 when no ping was answered since the client (re)connected.
    // Read performance.now() before calling, and that less this age is never later than the send.
    Napi::Value PingAnsweredAge(const Napi::CallbackInfo &info) {
        Napi::Env env = info.Env();
        int64_t age = zhandle ? zoo_nzl_ping_answered_age_ns(zhandle) : -1;
        if (age < 0) return Napi::Number::New(env, -1);
        // Rounded up to the microsecond: never shorter than the true age.
        return Napi::Number::New(env, (double) ((age + 999) / 1000) / 1000.0);
    }

    // ---- accessors ----

    Napi::Value GetState(const Napi::CallbackInfo &info) {
        return Napi::Number::New(info.Env(), zhandle != 0 ? zoo_state(zhandle) : 0);
    }
    Napi::Value GetClientId(const Napi::CallbackInfo &info) {
        return idAsString(info.Env(), zhandle != 0 ? zoo_client_id(zhandle)->client_id : myid.client_id);
    }
    Napi::Value GetClientPassword(const Napi::CallbackInfo &info) {
        return PasswordToHexString(info.Env(), zhandle != 0 ? zoo_client_id(zhandle)->passwd : myid.passwd);
    }
    Napi::Value GetTimeout(const Napi::CallbackInfo &info) {
        return Napi::Number::New(info.Env(), zhandle != 0 ? zoo_recv_timeout(zhandle) : -1);
    }
    // The server of the current connection ("host:port", an IPv6 address in brackets), or null while
    // not connected: the C client's zoo_get_current_server names the address it last tried then.
    Napi::Value GetCurrentServer(const Napi::CallbackInfo &info) {
        Napi::Env env = info.Env();
        if (!zhandle || is_closed) return env.Null();
        int state = zoo_state(zhandle);
        if (state != ZOO_CONNECTED_STATE && state != ZOO_READONLY_STATE) return env.Null();
        return Napi::String::New(env, zoo_get_current_server(zhandle));
    }
    Napi::Value GetIsUnrecoverable(const Napi::CallbackInfo &info) {
        return Napi::Number::New(info.Env(), zhandle != 0 ? is_unrecoverable(zhandle) : 0);
    }

    // ---- close ----

    void realClose(int code) {
        if (is_closed) {
            return;
        }
        is_closed = true;

        if (in_open_list) {
            if (open_prev) open_prev->open_next = open_next; else data->open = open_next;
            if (open_next) open_next->open_prev = open_prev;
            open_prev = open_next = nullptr;
            in_open_list = false;
        }

        if (zhandle) {
            // No request reaches the handle while it is destroyed (a callback run by the close may
            // try): ZINVALIDSTATE at once.
            zhandle_t *closing = zhandle;
            zhandle = 0;
            if (zk_timer && uv_is_active((uv_handle_t *) &zk_timer->timer)) {
                uv_timer_stop(&zk_timer->timer);
            }
            LOG_DEBUG("call zookeeper_close(%p)", (void *) closing);
            {
                CCall c(this);
                sweep_pending = true;
                // Runs the completions of requests in flight, with ZCLOSING. Inside a call from the
                // C client (a callback closing the handle), the handle is destroyed when that call
                // returns; the records it may still use are freed then (CCall).
                zookeeper_close(closing);
            }
            LOG_DEBUG("zookeeper_close() returned");

            dropPoll();

            // Close the timer; its close callback unreferences this object, which may then go.
            if (zk_timer) {
                data->closing_uv_handles++;
                uv_close((uv_handle_t *) &zk_timer->timer, timer_closed);
                zk_timer = nullptr;
            }

            noResponseCounter = 0;

            if (jsAllowed()) {
                Napi::HandleScope scope(Env());
                DoEmit("close", Napi::Number::New(Env(), code));
            }
        }
    }

    Napi::Value Close(const Napi::CallbackInfo &info) {
        JsCall js(this);
        realClose(0);
        return info.This();
    }

    // Closes this handle as the environment ends: nothing reaches JavaScript.
    void closeForTeardown() { realClose(0); }

private:
    friend struct AddonData;
    AddonData *data = nullptr;
    uv_loop_t *loop = nullptr;
    zhandle_t *zhandle = nullptr;
    clientid_t myid;
    PollHandle *zk_io = nullptr;
    int poll_events = 0;   // the events zk_io is armed for
    int poll_state = 0;    // the C client's state when zk_io was armed
    TimerHandle *zk_timer = nullptr;
    int fd = -1;
    int interest = 0;
    struct timeval tv = {0, 0};
    int64_t last_activity = 0; // time of last zookeeper event loop activity
    bool is_closed = false;
    int noResponseCounter = 0;
    int responseCounterLimit = 10;

    Request *requests = nullptr;  // requests in flight and aw_* watches set
    int js_depth = 0;             // calls from JavaScript under way (JsCall)
    int c_depth = 0;              // calls into the C client under way (CCall)
    bool sweep_pending = false;   // closed: free the records once c_depth is 0
    Napi::Reference<Napi::Value> deferred_error;
#ifdef HAVE_CYRUS_SASL_H
    SaslSetup *sasl = nullptr;    // the `sasl` init option: lives as long as this object
#endif

public:
    ZooKeeper *open_prev = nullptr;
    ZooKeeper *open_next = nullptr;
    bool in_open_list = false;
};

void AddonData::maybeFinishCleanup() {
    if (hook_running && open == nullptr && closing_uv_handles == 0 && hook) {
        napi_async_cleanup_hook_handle h = hook;
        hook = nullptr;
        hook_running = false;
        napi_remove_async_cleanup_hook(h);
    }
}

// The environment ends (a worker stops, or the main thread's environment is freed): open handles are
// closed without calling JavaScript, and the hook ends once libuv has closed their uv handles.
static void AsyncCleanup(napi_async_cleanup_hook_handle handle, void *arg) {
    AddonData *d = static_cast<AddonData *>(arg);
    d->hook = handle;
    d->hook_running = true;
    d->tearing_down = true;
    while (d->open) d->open->closeForTeardown();
    d->maybeFinishCleanup();
}

#define CONSTANT(name) Napi::ObjectWrap<ZooKeeper>::StaticValue(#name, Napi::Number::New(env, name), napi_enumerable)

static Napi::Object aclObject(Napi::Env env, int perms, const char *scheme, const char *auth) {
    Napi::Object o = Napi::Object::New(env);
    o.DefineProperties({
        Napi::PropertyDescriptor::Value("perms", Napi::Number::New(env, perms), napi_enumerable),
        Napi::PropertyDescriptor::Value("scheme", Napi::String::New(env, scheme), napi_enumerable),
        Napi::PropertyDescriptor::Value("auth", Napi::String::New(env, auth), napi_enumerable),
    });
    return o;
}

Napi::Function ZooKeeper::Define(Napi::Env env) {
    using W = Napi::ObjectWrap<ZooKeeper>;
    return W::DefineClass(env, "ZooKeeper", {
        InstanceMethod<&ZooKeeper::Init>("init"),
        InstanceMethod<&ZooKeeper::Close>("close"),
        InstanceMethod<&ZooKeeper::ACreate>("a_create"),
        InstanceMethod<&ZooKeeper::ACreateTtl>("a_create_ttl"),
        InstanceMethod<&ZooKeeper::ACreateAcl>("a_create_acl"),
        InstanceMethod<&ZooKeeper::AExists>("a_exists"),
        InstanceMethod<&ZooKeeper::AWExists>("aw_exists"),
        InstanceMethod<&ZooKeeper::AGet>("a_get"),
        InstanceMethod<&ZooKeeper::AWGet>("aw_get"),
        InstanceMethod<&ZooKeeper::AGetChildren>("a_get_children"),
        InstanceMethod<&ZooKeeper::AWGetChildren>("aw_get_children"),
        InstanceMethod<&ZooKeeper::AGetChildren2>("a_get_children2"),
        InstanceMethod<&ZooKeeper::AWGetChildren2>("aw_get_children2"),
        InstanceMethod<&ZooKeeper::ASet>("a_set"),
        InstanceMethod<&ZooKeeper::ADelete>("a_delete_"),
        InstanceMethod<&ZooKeeper::AGetAcl>("a_get_acl"),
        InstanceMethod<&ZooKeeper::ASetAcl>("a_set_acl"),
        InstanceMethod<&ZooKeeper::AMulti>("a_multi"),
        InstanceMethod<&ZooKeeper::ARemoveDataWatches>("a_remove_data_watches"),
        InstanceMethod<&ZooKeeper::AddAuth>("add_auth"),
        InstanceMethod<&ZooKeeper::ASync>("a_sync"),
        InstanceMethod<&ZooKeeper::AGetConfig>("a_getconfig"),
        InstanceMethod<&ZooKeeper::AWGetConfig>("aw_getconfig"),
        InstanceMethod<&ZooKeeper::SetServers>("set_servers"),
        InstanceMethod<&ZooKeeper::TlsNames>("tls_names"),
        InstanceMethod<&ZooKeeper::AReconfig>("a_reconfig"),
        InstanceMethod<&ZooKeeper::PingAnsweredAge>("ping_answered_age"),

        InstanceAccessor<&ZooKeeper::GetState>("state", napi_enumerable),
        InstanceAccessor<&ZooKeeper::GetClientId>("client_id", napi_enumerable),
        InstanceAccessor<&ZooKeeper::GetClientPassword>("client_password", napi_enumerable),
        InstanceAccessor<&ZooKeeper::GetTimeout>("timeout", napi_enumerable),
        InstanceAccessor<&ZooKeeper::GetCurrentServer>("current_server", napi_enumerable),
        InstanceAccessor<&ZooKeeper::GetIsUnrecoverable>("is_unrecoverable", napi_enumerable),

        W::StaticValue("ZOO_OPEN_ACL_UNSAFE", aclObject(env, ZOO_PERM_ALL, "world", "anyone"), napi_enumerable),
        W::StaticValue("ZOO_READ_ACL_UNSAFE", aclObject(env, ZOO_PERM_READ, "world", "anyone"), napi_enumerable),
        W::StaticValue("ZOO_CREATOR_ALL_ACL", aclObject(env, ZOO_PERM_ALL, "auth", ""), napi_enumerable),
        W::StaticValue("ZOO_CONFIG_NODE", Napi::String::New(env, ZOO_CONFIG_NODE), napi_enumerable),

        CONSTANT(ZOO_CREATED_EVENT), CONSTANT(ZOO_DELETED_EVENT), CONSTANT(ZOO_CHANGED_EVENT),
        CONSTANT(ZOO_CHILD_EVENT), CONSTANT(ZOO_SESSION_EVENT), CONSTANT(ZOO_NOTWATCHING_EVENT),

        CONSTANT(ZOO_PERM_READ), CONSTANT(ZOO_PERM_WRITE), CONSTANT(ZOO_PERM_CREATE),
        CONSTANT(ZOO_PERM_DELETE), CONSTANT(ZOO_PERM_ADMIN), CONSTANT(ZOO_PERM_ALL),

        CONSTANT(ZOOKEEPER_WRITE), CONSTANT(ZOOKEEPER_READ),

        CONSTANT(ZOO_PERSISTENT), CONSTANT(ZOO_EPHEMERAL), CONSTANT(ZOO_SEQUENCE),
        CONSTANT(ZOO_PERSISTENT_SEQUENTIAL), CONSTANT(ZOO_EPHEMERAL_SEQUENTIAL), CONSTANT(ZOO_CONTAINER),
        CONSTANT(ZOO_PERSISTENT_WITH_TTL), CONSTANT(ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL),

        CONSTANT(ZOO_LOG_LEVEL_ERROR), CONSTANT(ZOO_LOG_LEVEL_WARN), CONSTANT(ZOO_LOG_LEVEL_INFO),
        CONSTANT(ZOO_LOG_LEVEL_DEBUG),

        CONSTANT(ZOO_EXPIRED_SESSION_STATE), CONSTANT(ZOO_AUTH_FAILED_STATE), CONSTANT(ZOO_CONNECTING_STATE),
        CONSTANT(ZOO_ASSOCIATING_STATE), CONSTANT(ZOO_CONNECTED_STATE),

        CONSTANT(ZOK),
        // System and server-side errors (between ZSYSTEMERROR and ZAPIERROR).
        CONSTANT(ZSYSTEMERROR), CONSTANT(ZRUNTIMEINCONSISTENCY), CONSTANT(ZDATAINCONSISTENCY),
        CONSTANT(ZCONNECTIONLOSS), CONSTANT(ZMARSHALLINGERROR), CONSTANT(ZUNIMPLEMENTED),
        CONSTANT(ZOPERATIONTIMEOUT), CONSTANT(ZBADARGUMENTS), CONSTANT(ZINVALIDSTATE),
        // API errors (below ZAPIERROR).
        CONSTANT(ZAPIERROR), CONSTANT(ZNONODE), CONSTANT(ZNOAUTH), CONSTANT(ZBADVERSION),
        CONSTANT(ZNOCHILDRENFOREPHEMERALS), CONSTANT(ZNODEEXISTS), CONSTANT(ZNOTEMPTY),
        CONSTANT(ZSESSIONEXPIRED), CONSTANT(ZINVALIDCALLBACK), CONSTANT(ZINVALIDACL),
        CONSTANT(ZAUTHFAILED), CONSTANT(ZCLOSING), CONSTANT(ZNOTHING), CONSTANT(ZSESSIONMOVED),
    });
}

} // namespace zk

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
    zk::AddonData *data = new zk::AddonData();
    data->env = env;
    // Freed at the environment's end, after the cleanup hook below has run (Node-API's own teardown
    // runs after the hooks an addon adds).
    env.SetInstanceData<zk::AddonData>(data);
    napi_async_cleanup_hook_handle hook = nullptr;
    napi_add_async_cleanup_hook(env, zk::AsyncCleanup, data, &hook);
    data->hook = hook;
    exports.Set("ZooKeeper", zk::ZooKeeper::Define(env));
    return exports;
}

NODE_API_MODULE(zk_native, InitModule)
