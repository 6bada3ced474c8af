/**
 * Active Directory's `objectGUID` is 16 bytes in the Windows GUID layout (MS-DTYP §2.3.4.2): the
 * first three fields little-endian, the last eight bytes in order. Its canonical string form is the
 * stable id of a directory user; read as plain hex it would not match what AD tools show.
 */

const FIELDS: readonly (readonly number[])[] = [
  [3, 2, 1, 0],
  [5, 4],
  [7, 6],
  [8, 9],
  [10, 11, 12, 13, 14, 15],
];

const hex = (byte: number) => byte.toString(16).padStart(2, '0');

/** `c98b9135-6d19-…` form of a 16-byte objectGUID; `null` for anything else. */
export function decodeObjectGuid(bytes: Uint8Array): string | null {
  if (bytes.length !== 16) return null;
  return FIELDS.map((field) => field.map((index) => hex(bytes[index] as number)).join('')).join('-');
}

const GUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The 16 bytes of a canonical GUID string in objectGUID order, for a search filter; null if malformed. */
export function encodeObjectGuid(guid: string): Uint8Array | null {
  if (!GUID_PATTERN.test(guid)) return null;
  const ordered =
    guid
      .replaceAll('-', '')
      .match(/../g)
      ?.map((pair) => Number.parseInt(pair, 16)) ?? [];
  const bytes = new Uint8Array(16);
  FIELDS.flat().forEach((index, position) => {
    bytes[index] = ordered[position] as number;
  });
  return bytes;
}
