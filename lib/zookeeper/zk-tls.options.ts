import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { InvalidOptionsError, shown } from '../errors.js';

/**
 * TLS between this client and ZooKeeper (the servers' `secureClientPort`), as ZooKeeper's own
 * clients take it: PEM files, by path. The C client reads them again at every (re)connect.
 */
export interface ZkTlsOptions {
  /**
   * Path of a PEM file with the certificate(s) of the CA that signed the servers' certificates (what
   * the servers' `ssl.keyStore` holds is checked against it, and so is the name each server was
   * reached by: see `verifyHostname`). No comma in the path.
   */
  ca: string;
  /**
   * Path of a PEM file with this client's certificate (chain), for servers that ask for one
   * (`ssl.clientAuth=need`, or `want`). Together with `key`. No comma in the path.
   * @default undefined (no client certificate)
   */
  cert?: string;
  /**
   * Path of a PEM file with the private key of `cert`. Together with `cert`. No comma in the path.
   * @default undefined (no client certificate)
   */
  key?: string;
  /**
   * Passphrase of an encrypted `key`. Only with `key`; no comma in it.
   * @default undefined (the key is not encrypted)
   */
  passphrase?: string;
  /**
   * Whether each server's certificate must name the host it was reached by, as `connectionString`
   * writes it: a DNS name (also sent as SNI) among its DNS subject alternative names (or its common
   * name, when it has none), or an IP address among its IP subject alternative names. Checked by the C
   * client's own handshake at every connect and reconnect, to every server; a server whose
   * certificate names another host is refused, and the client goes on to the next one. With
   * `false`, any certificate `ca` signed is accepted from any server, whatever host it was issued
   * for: whoever holds one of them (another server's, or any other certificate that CA signed) can
   * stand in for the ensemble. As ZooKeeper's Java client, whose `zookeeper.ssl.hostnameVerification`
   * is true by default.
   * @default true
   */
  verifyHostname?: boolean;
}

/** The TLS files, checked and read once at start-up (the probe uses the contents). */
export interface CheckedTls {
  readonly options: ZkTlsOptions;
  /** `options.verifyHostname`, defaulted. */
  readonly verifyHostname: boolean;
  /** What the binding passes to zookeeper_init_ssl: `ca[,cert,key[,passphrase]]`. */
  readonly initString: string;
  readonly ca: Buffer;
  readonly cert: Buffer | undefined;
  /** The private key's PEM, as read (decrypted with `options.passphrase`). */
  readonly key: Buffer | undefined;
}

const FILE_FIELDS = ['ca', 'cert', 'key', 'passphrase'] as const;
const FIELDS = [...FILE_FIELDS, 'verifyHostname'] as const;

/**
 * Checks the `tls` option at start-up, so that what the C client would only log (and retry
 * forever) is an InvalidOptionsError that says what to fix.
 * @throws InvalidOptionsError naming `tls` or `tls.<field>`.
 */
export function checkTls(value: unknown): CheckedTls | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionsError('tls', `must be an object { ca, cert?, key?, passphrase?, verifyHostname? } (PEM file paths), got ${shown(value)}`);
  }
  const given = value as Record<string, unknown>;
  for (const field of Object.keys(given)) {
    if (!(FIELDS as readonly string[]).includes(field)) {
      throw new InvalidOptionsError(`tls.${field}`, `is not a TLS option: the fields are ${FIELDS.join(', ')}`);
    }
  }
  if (given.verifyHostname !== undefined && typeof given.verifyHostname !== 'boolean') {
    throw new InvalidOptionsError('tls.verifyHostname', `must be true or false, got ${shown(given.verifyHostname)}`);
  }
  for (const field of FILE_FIELDS) {
    const v = given[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') throw new InvalidOptionsError(`tls.${field}`, `must be a non-empty string, got ${shown(v)}`);
    if (v.includes(',')) {
      throw new InvalidOptionsError(
        `tls.${field}`,
        `${field === 'passphrase' ? 'contains' : `${shown(v)} contains`} a comma, which the ZooKeeper C client cannot take: it receives ` +
          '"ca,cert,key,passphrase" as one comma-separated string. ' +
          (field === 'passphrase' ? 'Re-encrypt the key with a passphrase without commas' : 'Move or link the file to a path without commas'),
      );
    }
  }
  const options = given as unknown as ZkTlsOptions;
  if (options.ca === undefined) {
    throw new InvalidOptionsError('tls.ca', 'is required: the path of a PEM file with the CA certificate that signed the ZooKeeper servers\' certificates');
  }
  if ((options.cert === undefined) !== (options.key === undefined)) {
    throw new InvalidOptionsError(
      options.cert === undefined ? 'tls.cert' : 'tls.key',
      'tls.cert and tls.key go together: give both (the client certificate and its private key, PEM files), or neither',
    );
  }
  if (options.passphrase !== undefined && options.key === undefined) {
    throw new InvalidOptionsError('tls.passphrase', 'is only used to decrypt tls.key: give tls.cert and tls.key too, or drop it');
  }
  const ca = readPem('tls.ca', options.ca);
  try {
    new X509Certificate(ca);
  } catch (error) {
    throw new InvalidOptionsError('tls.ca', `${shown(options.ca)} holds no PEM certificate (${(error as Error).message}): give the CA certificate in PEM ("-----BEGIN CERTIFICATE-----"); from a Java truststore: keytool -exportcert -rfc`);
  }
  let cert: Buffer | undefined;
  let key: Buffer | undefined;
  if (options.cert !== undefined && options.key !== undefined) {
    cert = readPem('tls.cert', options.cert);
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(cert);
    } catch (error) {
      throw new InvalidOptionsError('tls.cert', `${shown(options.cert)} holds no PEM certificate (${(error as Error).message})`);
    }
    key = readPem('tls.key', options.key);
    if (options.passphrase === undefined && /ENCRYPTED/.test(key.toString('latin1'))) {
      throw new InvalidOptionsError('tls.passphrase', `is missing: ${shown(options.key)} is an encrypted private key; give its passphrase (or decrypt the key)`);
    }
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey({ key, format: 'pem', ...(options.passphrase === undefined ? {} : { passphrase: options.passphrase }) });
    } catch (error) {
      const message = (error as Error).message;
      throw new InvalidOptionsError(
        'tls.key',
        `${shown(options.key)} could not be read as a PEM private key (${message}): ` +
          (options.passphrase === undefined ? 'if it is encrypted, give tls.passphrase' : 'check tls.passphrase, and that the file is a PEM private key'),
      );
    }
    if (!certificate.checkPrivateKey(privateKey)) {
      throw new InvalidOptionsError('tls.key', `${shown(options.key)} is not the private key of the certificate in ${shown(options.cert)}: give the pair that belongs together`);
    }
  }
  const initString = [options.ca, options.cert, options.key, options.passphrase].filter((part) => part !== undefined).join(',');
  return { options: { ...options }, verifyHostname: options.verifyHostname ?? true, initString, ca, cert, key };
}

function readPem(option: string, path: string): Buffer {
  try {
    if (!statSync(path).isFile()) throw new Error('not a regular file');
    accessSync(path, constants.R_OK);
    return readFileSync(path);
  } catch (error) {
    throw new InvalidOptionsError(
      option,
      `${shown(path)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): give the path of a PEM file this process may read ` +
        '(relative paths are from the working directory, ' + shown(process.cwd()) + ')',
    );
  }
}
