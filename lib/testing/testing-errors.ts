import { ZkLockError } from '../errors.js';

const INSTALL_HINT =
  "On Debian or Ubuntu: `apt-get install zookeeper` (it brings Java and /usr/share/java/zookeeper.jar). " +
  'Elsewhere: install a Java runtime and download Apache ZooKeeper, then point the `jarPath` option or the ' +
  'ZK_JAR environment variable at its jar (a class path such as `lib/*` works too). ' +
  'Tests that need no real server can use the in-memory ZooKeeper instead (InMemoryZooKeeper).';

/** The test server cannot start: Java or the ZooKeeper server jar is missing. */
export class ZooKeeperNotInstalledError extends ZkLockError {
  constructor(
    /** What is missing. */
    readonly missing: 'java' | 'jar',
    /** Where it was looked for. */
    readonly lookedFor: string,
  ) {
    super(
      missing === 'java'
        ? `Java was not found (looked for ${lookedFor}); the ZooKeeper test server runs on it. ${INSTALL_HINT} ` +
            'A Java outside PATH: set the `javaPath` option or the JAVA environment variable.'
        : `The ZooKeeper server jar was not found at ${lookedFor}. ${INSTALL_HINT}`,
    );
  }
}

/** A test server was started but did not come up (see its log). */
export class ZkTestServerError extends ZkLockError {
  constructor(
    message: string,
    /** The server's log file. */
    readonly logFile: string,
  ) {
    super(`${message}; see ${logFile}. A port taken by another process or too little memory are the usual causes.`);
  }
}
