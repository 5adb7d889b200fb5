import { ZkSaslError } from '../errors.js';
import type { CheckedSasl } from './zk-sasl.options.js';

/** What the binding reports when SASL failed ('sasl_failed'): the C client's code, and the SASL client's words. */
export interface SaslFailure {
  readonly code: number;
  readonly detail?: string;
}

/** The server's answers that mean it refused the session's authentication. */
const AUTH_FAILED = -115;
/** ZSESSIONCLOSEDREQUIRESASLAUTH: the server requires SASL and the session has not authenticated. */
export const SESSION_REQUIRES_SASL = -124;

/** The typed error for a SASL failure reported by the binding, with what to change. */
export function saslError(connectionString: string, sasl: CheckedSasl, failure: SaslFailure): ZkSaslError {
  const who = sasl.mechanism === 'DIGEST-MD5' ? `user ${JSON.stringify(sasl.user)}` : `principal ${sasl.user}`;
  if (failure.code === AUTH_FAILED || failure.code === SESSION_REQUIRES_SASL) {
    return new ZkSaslError(
      connectionString,
      'rejected',
      sasl.mechanism,
      `the server refused ${sasl.mechanism} for ${who}`,
      sasl.mechanism === 'DIGEST-MD5'
        ? 'Check sasl.username and sasl.password against the servers\' JAAS Server section (user_<name>="<password>" of DigestLoginModule); ' +
            'a server whose Server section is for Kerberos (Krb5LoginModule) refuses DIGEST-MD5 alike.'
        : 'Check that the servers\' JAAS Server section uses Krb5LoginModule with the principal <serviceName>/<host>@REALM this client asked a ticket for, ' +
            'and the server log for the reason.',
    );
  }
  return new ZkSaslError(
    connectionString,
    'client-failed',
    sasl.mechanism,
    failure.detail ?? `the SASL client failed (${failure.code})`,
    sasl.mechanism === 'GSSAPI'
      ? 'Check sasl.principal and sasl.keytab (klist -kt <keytab>), the Kerberos configuration (KRB5_CONFIG or /etc/krb5.conf), ' +
          'and that the KDC knows <serviceName>/<host> for every server (sasl.serviceName, sasl.serviceHost).'
      : 'Check that connectionString names your ZooKeeper servers: the server that answered could not prove it knows the password.',
  );
}

/** Start-up found a server that requires SASL, and the `sasl` option is not set. */
export function saslRequiredError(connectionString: string): ZkSaslError {
  return new ZkSaslError(
    connectionString,
    'required',
    undefined,
    'the server closed the session because it requires SASL authentication (zookeeper.sessionRequireClientSASLAuth or enforce.auth.schemes=sasl) and none was configured',
    "Set the sasl option: { mechanism: 'DIGEST-MD5', username, password } for a DigestLoginModule user of the servers' JAAS Server section, " +
      "or { mechanism: 'GSSAPI', principal, keytab } for Kerberos.",
  );
}
