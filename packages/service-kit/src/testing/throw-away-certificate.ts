import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireSystemProgram } from './system-programs.js';

/**
 * The one throw-away certificate of the TLS fixtures (slapd's ldaps://, the SMTP server's STARTTLS,
 * the gateway's nginx): a CA valid one day and a P-256 server certificate it signed for
 * `localhost` and 127.0.0.1, made with openssl. A client trusts `caFile` (or `caPem`); the server
 * gets `certFile` and `keyFile`.
 */

/** The entry of deploy/ci/system-packages.json this fixture runs. */
export const throwAwayCaRequires = 'openssl';

export interface ThrowAwayCa {
  caFile: string;
  caPem: string;
  certFile: string;
  keyFile: string;
  key: Buffer;
  cert: Buffer;
  /** Removes the folder (when the CA made its own). */
  remove(): void;
}

/** In `folder` when given (removed with it), else in a temporary folder of its own. */
export function makeThrowAwayCa(folder?: string): ThrowAwayCa {
  requireSystemProgram(throwAwayCaRequires, 'the throw-away certificate');
  const dir = folder ?? mkdtempSync(join(tmpdir(), 'throw-away-ca-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const p256 = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...p256,
    '-days',
    '1',
    '-subj',
    '/CN=throw-away test CA',
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.pem'),
  );
  openssl('req', ...p256, '-subj', '/CN=localhost', '-keyout', at('server.key'), '-out', at('server.csr'));
  writeFileSync(at('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    at('server.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    at('ext.cnf'),
    '-out',
    at('server.pem'),
  );
  return {
    caFile: at('ca.pem'),
    caPem: readFileSync(at('ca.pem'), 'utf8'),
    certFile: at('server.pem'),
    keyFile: at('server.key'),
    key: readFileSync(at('server.key')),
    cert: readFileSync(at('server.pem')),
    remove: () => {
      if (folder === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
