import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * Host-name checks of a server's certificate, for the start-up probe: the same rule the C client's
 * handshake applies (native/c-client.cjs, patchHostCheck), through the same OpenSSL calls
 * (X509Certificate.checkHost and checkIP are X509_check_host and X509_check_ip_asc): a DNS name must
 * match a DNS subject alternative name, a wildcard only as a whole left-most label (or the common
 * name, when there is no DNS name), and an IP address an IP subject alternative name.
 */

/** The names a certificate holds, as `DNS:…`, `IP Address:…` (its subject alternative names) and `CN=…`. */
export function certificateNames(certificate: X509Certificate): string[] {
  const names = (certificate.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((name) => /^(DNS|IP Address):/.test(name));
  const cn = /^CN=(.*)$/m.exec(certificate.subject)?.[1];
  return cn === undefined ? names : [...names, `CN=${cn}`];
}

/** Whether `certificate` (DER) names `host` (a DNS name or an IP address) as the C client requires. */
export function namesHost(der: Buffer, host: string): boolean {
  const certificate = new X509Certificate(der);
  return isIP(host) ? certificate.checkIP(host) !== undefined : certificate.checkHost(host, { partialWildcards: false }) !== undefined;
}

/** Why a certificate that does not name `host` was refused, in one line. */
export function mismatchDetail(der: Buffer, host: string): string {
  const names = certificateNames(new X509Certificate(der));
  return `the certificate names ${names.length > 0 ? names.join(', ') : 'no host'}, not ${host}, the name it was reached by`;
}
