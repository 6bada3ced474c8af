import { readFile } from 'node:fs/promises';

/**
 * Reads the principal names in a keytab, so start-up can say which service principal it accepts
 * and fail with one clear line when the file is missing, unreadable or not a keytab. The keys
 * themselves are never looked at here: GSSAPI reads the same file (via KRB5_KTNAME) to decrypt
 * tickets.
 *
 * Format: MIT krb5 "keytab file format" (doc/formats/keytab_file_format.rst), version 0x502: a
 * 16-bit version, then entries, each a signed 32-bit length (negative = a hole left by a deleted
 * entry) followed by num_components (16 bits), the realm and each component as 16-bit-length
 * strings, then name type, timestamp, key version and the key. All integers are big-endian.
 */

/** A keytab problem, phrased as one line for the operator (never includes key material). */
export class KeytabError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeytabError';
  }
}

const KEYTAB_VERSION_2 = 0x0502;

/** KRB5_KTNAME may be `/path`, `FILE:/path` or `WRFILE:/path`; other keytab types are not files. */
export function keytabPath(ktname: string): string {
  const typed = /^([A-Za-z0-9]+):(.*)$/.exec(ktname);
  if (typed === null) return ktname;
  if (typed[1] === 'FILE' || typed[1] === 'WRFILE') return typed[2] as string;
  throw new KeytabError(`KRB5_KTNAME is invalid: only file keytabs are supported (got type ${typed[1]})`);
}

/** The distinct principals (`HTTP/host@REALM`) of the keytab named by KRB5_KTNAME, in file order. */
export async function readKeytabPrincipals(ktname: string): Promise<string[]> {
  const path = keytabPath(ktname);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new KeytabError(`KRB5_KTNAME is invalid: cannot read the keytab ${path} (${code})`);
  }
  const principals = parseKeytabPrincipals(bytes);
  if (principals === null) throw new KeytabError(`KRB5_KTNAME is invalid: ${path} is not a version 2 keytab`);
  if (principals.length === 0)
    throw new KeytabError(`KRB5_KTNAME is invalid: the keytab ${path} holds no keys`);
  return principals;
}

/** `null` when the bytes are not a version 2 keytab. */
export function parseKeytabPrincipals(bytes: Buffer): string[] | null {
  if (bytes.length < 2 || bytes.readUInt16BE(0) !== KEYTAB_VERSION_2) return null;
  const principals = new Set<string>();
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    const size = bytes.readInt32BE(offset);
    offset += 4;
    if (size === 0) break;
    const end = offset + Math.abs(size);
    if (end > bytes.length) return null;
    if (size > 0) {
      const principal = principalAt(bytes.subarray(offset, end));
      if (principal === null) return null;
      principals.add(principal);
    }
    offset = end;
  }
  return [...principals];
}

function principalAt(entry: Buffer): string | null {
  let offset = 0;
  const readString = (): string | null => {
    if (offset + 2 > entry.length) return null;
    const length = entry.readUInt16BE(offset);
    const value = entry.subarray(offset + 2, offset + 2 + length);
    offset += 2 + length;
    return offset > entry.length ? null : value.toString('utf8');
  };
  if (entry.length < 2) return null;
  const componentCount = entry.readUInt16BE(0);
  offset = 2;
  const realm = readString();
  const components: string[] = [];
  for (let index = 0; index < componentCount; index++) {
    const component = readString();
    if (component === null) return null;
    components.push(component);
  }
  return realm === null ? null : `${components.join('/')}@${realm}`;
}
