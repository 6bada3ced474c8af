/**
 * The URL of the next page of a list: the same query with the page's `cursor`, sent in a
 * `Link: <…>; rel="next"` header (RFC 8288 §3), so the body stays a plain JSON list.
 */
export function nextPageUrl(
  base: string,
  query: Readonly<Record<string, string | number | undefined>>,
  cursor: string,
): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && name !== 'cursor') parameters.set(name, String(value));
  }
  parameters.set('cursor', cursor);
  return `${base}?${parameters}`;
}
